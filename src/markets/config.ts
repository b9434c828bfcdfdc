import Type from 'typebox';
import { defineSettings } from '../lib/settings.js';

/** The default of MARKETS_DETAIL_CACHE_TIMEOUT_MS. */
export const DETAIL_CACHE_TIMEOUT_MS = 250;

/** Market data: the operator's ingestion route and the detail's book depth (docs/markets.md). */
export const marketSettings = defineSettings(
  {
    ADMIN_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
    MARKETS_INGEST_BODY_LIMIT_BYTES: Type.Integer({ default: 16_777_216, minimum: 1024 }),
    MARKETS_BOOK_DEPTH: Type.Integer({ default: 20, minimum: 1, maximum: 10_001 }),
    MARKETS_LIFECYCLE_CONCURRENCY: Type.Integer({ default: 10, minimum: 1, maximum: 1000 }),
    MARKETS_LIFECYCLE_LEASE_MS: Type.Integer({ default: 120_000, minimum: 1000 }),
    MARKETS_LIST_CACHE: Type.Boolean({ default: true }),
    MARKETS_DETAIL_CACHE_TIMEOUT_MS: Type.Integer({
      default: DETAIL_CACHE_TIMEOUT_MS,
      minimum: 1,
      maximum: 60_000,
    }),
    MARKETS_DETAIL_CACHE_PREFIX: Type.String({
      default: 'sibyl:market-detail:',
      minLength: 1,
      maxLength: 200,
    }),
  },
  (v) => ({
    /** The operator's bearer token for POST /admin/markets/events; unset = the route does not exist. */
    adminToken: v.ADMIN_TOKEN,
    /** Largest NDJSON body the admin route accepts. */
    ingestBodyLimitBytes: v.MARKETS_INGEST_BODY_LIMIT_BYTES,
    /** Price levels shown per side of each orderbook (docs/markets.md). */
    bookDepth: v.MARKETS_BOOK_DEPTH,
    /** Markets one worker process closes and resolves at once. */
    lifecycleConcurrency: v.MARKETS_LIFECYCLE_CONCURRENCY,
    /** How long a worker holds a market it is resolving (longer than an AI resolution's deadline). */
    lifecycleLeaseMs: v.MARKETS_LIFECYCLE_LEASE_MS,
    /** List pages cached until the list changes (docs/markets.md, "List"); false: read every time. */
    listCache: v.MARKETS_LIST_CACHE,
    /** Redis key prefix of the shared detail cache (with REDIS_URL): one per deployment sharing a Redis. */
    detailCachePrefix: v.MARKETS_DETAIL_CACHE_PREFIX,
    /** How long a Redis command of the shared detail cache may take before it counts as a miss. */
    detailCacheTimeoutMs: v.MARKETS_DETAIL_CACHE_TIMEOUT_MS,
  }),
);

export type MarketsConfig = ReturnType<typeof marketSettings.parse>;
