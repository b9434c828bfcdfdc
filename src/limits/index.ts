/** Rate limits (local and Redis), quotas, access settings: the room's door. */
export { AuthFailureLimiter, failureAddress } from './auth-failures.js';
export type { AccessConfig } from './config.js';
export { EXPOSED_HEADERS, quotaError, takeOperationLimit, takeRateLimit } from './enforce.js';
export {
  countAgainstQuotas,
  hasQuota,
  NO_QUOTAS,
  type QuotaContext,
  type QuotaLimits,
  type QuotaRefusal,
  readUsage,
  type UsageNow,
} from './quotas.js';
export { LocalRateLimiter, MIN_PER_SECOND, type RateLimiter, type RateLimitPolicy } from './rate-limiter.js';

/** The Redis-backed limiter, loaded on demand: only an API with REDIS_URL needs its client. */
export const redisRateLimiter = async () => (await import('./redis-rate-limiter.js')).RedisRateLimiter;
