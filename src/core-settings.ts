import Type from 'typebox';
import { defineSettings } from './lib/settings.js';

/** The process itself: database, HTTP listener, logging, shared Redis. */
export const coreSettings = defineSettings(
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

/** The process's own settings (its part of `Config`): what the files below the composition roots read. */
export type CoreConfig = ReturnType<typeof coreSettings.parse>;
