import Type, { type Static } from 'typebox';
import Value from 'typebox/value';

/**
 * Every setting the service reads, parsed once from the environment by this one schema, which
 * also gives the type. Each has a safe default; docs/operations.md lists them all.
 */
const Env = Type.Object({
  DATABASE_URL: Type.Optional(
    Type.String({ minLength: 1, description: 'PostgreSQL URL; unset → embedded PGlite' }),
  ),
  SIBYL_DATA_DIR: Type.String({ default: './data', minLength: 1 }),
  PORT: Type.Integer({ default: 3000, minimum: 0, maximum: 65535 }),
  HOST: Type.String({ default: '127.0.0.1', minLength: 1 }),
  LOG_LEVEL: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info' }),
  PUBLIC_BASE_URL: Type.Optional(Type.String({ minLength: 1 })),
  BODY_LIMIT_BYTES: Type.Integer({ default: 131_072, minimum: 1024 }),
  REQUEST_TIMEOUT_MS: Type.Integer({ default: 30_000, minimum: 1000 }),
  KEEP_ALIVE_TIMEOUT_MS: Type.Integer({ default: 72_000, minimum: 1000 }),
  SHUTDOWN_GRACE_MS: Type.Integer({ default: 10_000, minimum: 0 }),
  DB_POOL_SIZE: Type.Integer({ default: 10, minimum: 1, maximum: 500 }),
  AUTH_CACHE_TTL_MS: Type.Integer({ default: 60_000, minimum: 0 }),
  AUTH_CACHE_SYNC_MS: Type.Integer({ default: 1000, minimum: 100 }),
  AUTH_CACHE_MAX_ENTRIES: Type.Integer({ default: 10_000, minimum: 1 }),
  RECONCILE_INTERVAL_MS: Type.Integer({ default: 3_600_000, minimum: 1000 }),
});

type EnvValues = Static<typeof Env>;

export interface Config {
  databaseUrl: string | undefined;
  dataDir: string;
  port: number;
  host: string;
  logLevel: EnvValues['LOG_LEVEL'];
  publicBaseUrl: string | undefined;
  bodyLimitBytes: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  shutdownGraceMs: number;
  dbPoolSize: number;
  authCache: { ttlMs: number; syncMs: number; maxEntries: number };
  reconcileIntervalMs: number;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const known: Record<string, string> = {};
  for (const name of Object.keys(Env.properties)) {
    const value = env[name];
    // An empty variable means "not set", as in most shells' `FOO= cmd`.
    if (value !== undefined && value !== '') known[name] = value;
  }
  const converted = Value.Convert(Env, Value.Default(Env, known));
  if (!Value.Check(Env, converted)) {
    const problems = [...Value.Errors(Env, converted)]
      .filter((e) => e.keyword !== 'anyOf')
      .map((e) => `${e.instancePath.slice(1) || 'environment'} ${e.message}`);
    throw new ConfigError(`Invalid configuration: ${[...new Set(problems)].join('; ')}`);
  }
  const v = converted as EnvValues;
  return {
    databaseUrl: v.DATABASE_URL,
    dataDir: v.SIBYL_DATA_DIR,
    port: v.PORT,
    host: v.HOST,
    logLevel: v.LOG_LEVEL,
    publicBaseUrl: v.PUBLIC_BASE_URL,
    bodyLimitBytes: v.BODY_LIMIT_BYTES,
    requestTimeoutMs: v.REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: v.KEEP_ALIVE_TIMEOUT_MS,
    shutdownGraceMs: v.SHUTDOWN_GRACE_MS,
    dbPoolSize: v.DB_POOL_SIZE,
    authCache: {
      ttlMs: v.AUTH_CACHE_TTL_MS,
      syncMs: v.AUTH_CACHE_SYNC_MS,
      maxEntries: v.AUTH_CACHE_MAX_ENTRIES,
    },
    reconcileIntervalMs: v.RECONCILE_INTERVAL_MS,
  };
}
