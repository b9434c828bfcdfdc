import Type from 'typebox';
import Value from 'typebox/value';
import { aiSettings } from './ai/config.js';
import { dashboardSettings } from './dashboard/index.js';
import { depositSettings } from './deposits/index.js';
import { jobSettings } from './jobs/config.js';
import { authCacheSettings } from './keys/config.js';
import { ledgerSettings } from './ledger/config.js';
import { ConfigError, defineSettings } from './lib/settings.js';
import { accessSettings } from './limits/config.js';
import { marketSettings } from './markets/config.js';
import { metricsSettings } from './metrics/config.js';
import { priceSettings } from './prices/config.js';
import { retentionSettings } from './retention/config.js';
import { webhookSettings } from './webhooks/config.js';

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

/**
 * Every setting the service reads: the core's and each feature's, composed into one schema that is
 * parsed once from the environment and also gives the type. Each has a safe default;
 * docs/operations.md lists them all.
 */
const Env = Type.Object({
  ...coreSettings.env,
  ...authCacheSettings.env,
  ...accessSettings.env,
  ...ledgerSettings.env,
  ...priceSettings.env,
  ...jobSettings.env,
  ...marketSettings.env,
  ...aiSettings.env,
  ...webhookSettings.env,
  ...metricsSettings.env,
  ...retentionSettings.env,
  ...dashboardSettings.env,
  ...depositSettings.env,
});

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
  const values = converted;
  return {
    ...coreSettings.parse(values),
    authCache: authCacheSettings.parse(values),
    access: accessSettings.parse(values),
    ledger: ledgerSettings.parse(values),
    prices: priceSettings.parse(values),
    jobs: jobSettings.parse(values),
    markets: marketSettings.parse(values),
    ai: aiSettings.parse(values),
    webhooks: webhookSettings.parse(values),
    metrics: metricsSettings.parse(values),
    retention: retentionSettings.parse(values),
    dashboard: dashboardSettings.parse(values),
    deposits: depositSettings.parse(values),
  };
}

export type Config = ReturnType<typeof loadConfig>;
