import Type, { type Static } from 'typebox';
import Value from 'typebox/value';
import { type Cidr, parseCidr } from './lib/ip.js';
import { LIVE_VENUES, type LiveVenueName, type VenueSettings } from './prices/types.js';

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
  CHARGE_BATCHING: Type.Boolean({ default: true }),
  CHARGE_BATCH_MAX: Type.Integer({ default: 1000, minimum: 1, maximum: 10_000 }),
  CHARGE_BATCH_IN_FLIGHT: Type.Integer({ default: 1, minimum: 1, maximum: 64 }),
  TRUSTED_PROXIES: Type.String({ default: '' }),
  REDIS_URL: Type.Optional(Type.String({ minLength: 1 })),
  RATE_LIMIT_PER_SECOND: Type.Number({ default: 50, minimum: 0.001 }),
  RATE_LIMIT_BURST: Type.Integer({ default: 100, minimum: 1 }),
  RATE_LIMIT_MAX_PER_SECOND: Type.Number({ default: 500, minimum: 0.001 }),
  RATE_LIMIT_MAX_BURST: Type.Integer({ default: 1000, minimum: 1 }),
  CORS_MAX_AGE_SECONDS: Type.Integer({ default: 600, minimum: 0 }),
  PRICE_VENUES: Type.String({ default: LIVE_VENUES.join(',') }),
  PRICE_CACHE_TTL_MS: Type.Integer({ default: 2000, minimum: 0 }),
  PRICE_ERROR_CACHE_TTL_MS: Type.Integer({ default: 1000, minimum: 0 }),
  PRICE_VENUE_TIMEOUT_MS: Type.Integer({ default: 2500, minimum: 50 }),
  PRICE_MAX_AGE_MS: Type.Integer({ default: 120_000, minimum: 1000 }),
  PRICE_OUTLIER_TOLERANCE: Type.Number({ default: 0.02, exclusiveMinimum: 0, maximum: 1 }),
  PRICE_MIN_SOURCES: Type.Integer({ default: 2, minimum: 1 }),
  PRICE_BREAKER_FAILURES: Type.Integer({ default: 5, minimum: 1 }),
  PRICE_BREAKER_COOLDOWN_MS: Type.Integer({ default: 30_000, minimum: 0 }),
  BINANCE_BASE_URL: Type.String({ default: 'https://data-api.binance.vision' }),
  COINBASE_BASE_URL: Type.String({ default: 'https://api.exchange.coinbase.com' }),
  KRAKEN_BASE_URL: Type.String({ default: 'https://api.kraken.com' }),
  OKX_BASE_URL: Type.String({ default: 'https://www.okx.com' }),
  COINGECKO_BASE_URL: Type.Optional(Type.String({ minLength: 1 })),
  COINGECKO_PLAN: Type.Enum(['demo', 'pro'], { default: 'demo' }),
  COINGECKO_API_KEY: Type.Optional(Type.String({ minLength: 1 })),
  JUPITER_BASE_URL: Type.String({ default: 'https://api.jup.ag/price/v3' }),
  JUPITER_API_KEY: Type.Optional(Type.String({ minLength: 1 })),
  DEXSCREENER_BASE_URL: Type.String({ default: 'https://api.dexscreener.com' }),
  PYTH_BASE_URL: Type.String({ default: 'https://hermes.pyth.network' }),
  ADMIN_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  MARKETS_INGEST_BODY_LIMIT_BYTES: Type.Integer({ default: 16_777_216, minimum: 1024 }),
  MARKETS_BOOK_DEPTH: Type.Integer({ default: 20, minimum: 1, maximum: 10_001 }),
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
  access: AccessConfig;
  prices: PriceConfig;
  /** Charge coalescing (docs/performance.md); off = one statement per charge. */
  charges: { batching: boolean; maxBatch: number; maxInFlight: number };
  markets: MarketsConfig;
}

export interface MarketsConfig {
  /** The operator's bearer token for POST /admin/markets/events; unset = the route does not exist. */
  adminToken: string | undefined;
  /** Largest NDJSON body the ingestion route accepts. */
  ingestBodyLimitBytes: number;
  /** Price levels shown per side of each orderbook (docs/markets.md). */
  bookDepth: number;
}

export interface AccessConfig {
  /** Proxies whose X-Forwarded-For is believed (CIDR ranges). */
  trustedProxies: Cidr[];
  redisUrl: string | undefined;
  /** The rate limit of keys that set none. */
  defaultRateLimit: { perSecond: number; burst: number };
  /** The most a key may be given through the API. */
  ceilings: { maxPerSecond: number; maxBurst: number };
  corsMaxAgeSeconds: number;
}

export interface PriceConfig {
  venues: LiveVenueName[];
  cacheTtlMs: number;
  errorCacheTtlMs: number;
  maxAgeMs: number;
  outlierTolerance: number;
  minSources: number;
  breakerFailures: number;
  breakerCooldownMs: number;
  venueSettings: Record<LiveVenueName, VenueSettings & { plan?: 'demo' | 'pro' }>;
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
  const venueNames = v.PRICE_VENUES.split(',')
    .map((n) => n.trim().toLowerCase())
    .filter(Boolean);
  const unknownVenues = venueNames.filter((n) => !(LIVE_VENUES as readonly string[]).includes(n));
  if (unknownVenues.length > 0) {
    throw new ConfigError(
      `Invalid configuration: PRICE_VENUES names unknown venues (${unknownVenues.join(', ')}); known: ${LIVE_VENUES.join(', ')}`,
    );
  }
  const trustedProxies: Cidr[] = [];
  for (const entry of v.TRUSTED_PROXIES.split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const parsed = parseCidr(entry);
    if ('error' in parsed)
      throw new ConfigError(`Invalid configuration: TRUSTED_PROXIES entry "${entry}" ${parsed.error}`);
    trustedProxies.push(parsed.cidr);
  }
  const timeoutMs = v.PRICE_VENUE_TIMEOUT_MS;
  const coingeckoBase =
    v.COINGECKO_BASE_URL ??
    (v.COINGECKO_PLAN === 'pro'
      ? 'https://pro-api.coingecko.com/api/v3'
      : 'https://api.coingecko.com/api/v3');
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
    charges: {
      batching: v.CHARGE_BATCHING,
      maxBatch: v.CHARGE_BATCH_MAX,
      maxInFlight: v.CHARGE_BATCH_IN_FLIGHT,
    },
    markets: {
      adminToken: v.ADMIN_TOKEN,
      ingestBodyLimitBytes: v.MARKETS_INGEST_BODY_LIMIT_BYTES,
      bookDepth: v.MARKETS_BOOK_DEPTH,
    },
    access: {
      trustedProxies,
      redisUrl: v.REDIS_URL,
      defaultRateLimit: { perSecond: v.RATE_LIMIT_PER_SECOND, burst: v.RATE_LIMIT_BURST },
      ceilings: { maxPerSecond: v.RATE_LIMIT_MAX_PER_SECOND, maxBurst: v.RATE_LIMIT_MAX_BURST },
      corsMaxAgeSeconds: v.CORS_MAX_AGE_SECONDS,
    },
    prices: {
      venues: [...new Set(venueNames)] as LiveVenueName[],
      cacheTtlMs: v.PRICE_CACHE_TTL_MS,
      errorCacheTtlMs: v.PRICE_ERROR_CACHE_TTL_MS,
      maxAgeMs: v.PRICE_MAX_AGE_MS,
      outlierTolerance: v.PRICE_OUTLIER_TOLERANCE,
      minSources: v.PRICE_MIN_SOURCES,
      breakerFailures: v.PRICE_BREAKER_FAILURES,
      breakerCooldownMs: v.PRICE_BREAKER_COOLDOWN_MS,
      venueSettings: {
        binance: { baseUrl: v.BINANCE_BASE_URL, timeoutMs },
        coinbase: { baseUrl: v.COINBASE_BASE_URL, timeoutMs },
        kraken: { baseUrl: v.KRAKEN_BASE_URL, timeoutMs },
        okx: { baseUrl: v.OKX_BASE_URL, timeoutMs },
        coingecko: { baseUrl: coingeckoBase, timeoutMs, apiKey: v.COINGECKO_API_KEY, plan: v.COINGECKO_PLAN },
        jupiter: { baseUrl: v.JUPITER_BASE_URL, timeoutMs, apiKey: v.JUPITER_API_KEY },
        dexscreener: { baseUrl: v.DEXSCREENER_BASE_URL, timeoutMs },
        pyth: { baseUrl: v.PYTH_BASE_URL, timeoutMs },
      },
    },
  };
}
