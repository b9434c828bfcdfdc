import Type, { type Static, type TObject, type TProperties } from 'typebox';
import Value from 'typebox/value';
import type { Feature, SettingsFragments } from './feature.js';
import { FEATURES } from './features.js';
import { streamSettings } from './http/event-stream/config.js';
import { ConfigError, defineSettings } from './lib/settings.js';
import { metricsSettings } from './metrics/config.js';

export { ConfigError } from './lib/settings.js';

/** The process itself: database, HTTP listener, logging, shared Redis. */
const coreSettings = defineSettings(
  {
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
    REDIS_URL: Type.Optional(Type.String({ minLength: 1 })),
  },
  (v) => ({
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
    /** Shared state across instances (rate-limit buckets); unset: per instance. */
    redisUrl: v.REDIS_URL,
  }),
);

type SettingsOf<F> = F extends Feature<infer S> ? S : never;
type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
type Parsed<S extends SettingsFragments> = { [K in keyof S]: ReturnType<S[K]['parse']> };

/** The fragments besides the core's: the mechanisms' (metrics listener, event streams) and every feature's. */
type Fragments = { metrics: typeof metricsSettings; streams: typeof streamSettings } & Intersection<
  SettingsOf<(typeof FEATURES)[number]>
>;

function fragments(): Fragments {
  const all: SettingsFragments = { metrics: metricsSettings, streams: streamSettings };
  for (const feature of FEATURES) Object.assign(all, feature.settings);
  // The list's own types, which the loop cannot follow: each key is one feature's `settings` entry.
  return all as Fragments;
}

const FRAGMENTS = fragments();

/**
 * Every setting the service reads: the core's and each feature's (src/features.ts), composed into
 * one schema that is parsed once from the environment; the type follows from the fragments. Each
 * has a safe default; docs/operations.md lists them all.
 */
const Env = Type.Object(envOf({ core: coreSettings, ...FRAGMENTS }));

function envOf(all: SettingsFragments): TProperties {
  const env: TProperties = {};
  for (const fragment of Object.values(all)) Object.assign(env, fragment.env);
  return env;
}

function parseFragments<S extends SettingsFragments>(
  all: S,
  values: Static<TObject<TProperties>>,
): Parsed<S> {
  return Object.fromEntries(
    Object.entries(all).map(([key, fragment]) => [key, fragment.parse(values)]),
  ) as Parsed<S>;
}

export function loadConfig(env: Record<string, string | undefined> = process.env) {
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
  const { core, ...features } = parseFragments({ core: coreSettings, ...FRAGMENTS }, converted);
  return { ...core, ...features };
}

export type Config = ReturnType<typeof loadConfig>;
