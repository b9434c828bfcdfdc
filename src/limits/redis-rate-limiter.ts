import type { Redis } from 'ioredis';
import { createRedisClient } from '../lib/redis.js';
import type { Log } from '../logger.js';
import {
  type LocalRateLimiter,
  MIN_PER_SECOND,
  type RateLimitDecision,
  type RateLimiter,
  type RateLimitPolicy,
} from './rate-limiter.js';

// The same GCRA step as gcraStep(), atomically inside Redis so every API instance shares a bucket:
// the state is the bucket's debt in requests and when it was written ("debt at"), measured against
// the policy of each call, so a changed limit applies at once (rate-limiter.ts BucketState).
// Returns integers (Redis truncates Lua numbers): allowed, remaining, resetMs, retryAfterMs.
const GCRA_SCRIPT = `
local now = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local debt = 0
local stored = redis.call('GET', KEYS[1])
if stored then
  local d, at = string.match(stored, '^(%S+) (%S+)$')
  if d then debt = math.max(0, tonumber(d) - math.max(0, now - tonumber(at)) / interval) end
end
if debt + 1 > burst + 1e-9 then
  return {0, 0, math.ceil(debt * interval), math.ceil((debt + 1 - burst) * interval)}
end
local reset = math.ceil((debt + 1) * interval)
redis.call('SET', KEYS[1], string.format('%.17g %.17g', debt + 1, now), 'PX', reset + 1000)
return {1, math.floor(burst - debt - 1 + 1e-9), reset, 0}
`;

type GcraRedis = Redis & {
  sibylGcra(
    key: string,
    now: number,
    interval: number,
    burst: number,
  ): Promise<[number, number, number, number]>;
};

/** The default of RATE_LIMIT_REDIS_TIMEOUT_MS. */
export const REDIS_TIMEOUT_MS = 250;

/**
 * Buckets in Redis, shared by every API instance. Policy when Redis cannot be reached, or does not
 * answer within `timeoutMs` (RATE_LIMIT_REDIS_TIMEOUT_MS): fall back to this instance's own buckets
 * (limits still hold per instance, nothing fails), log it at most once a minute, and go back to
 * Redis as soon as it answers again.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly redis: GcraRedis;
  private lastWarning = 0;

  constructor(
    url: string,
    private readonly fallback: LocalRateLimiter,
    private readonly logger: Pick<Log, 'warn'>,
    // v2: the state is a debt in requests (before: an arrival time), so instances of the two
    // releases side by side during an upgrade keep apart buckets rather than misreading each other's.
    private readonly prefix = 'sibyl:rl2:',
    timeoutMs = REDIS_TIMEOUT_MS,
  ) {
    const redis = createRedisClient(url, { commandTimeoutMs: timeoutMs });
    redis.defineCommand('sibylGcra', { numberOfKeys: 1, lua: GCRA_SCRIPT });
    this.redis = redis as GcraRedis;
  }

  async take(key: string, policy: RateLimitPolicy, nowMs: number): Promise<RateLimitDecision> {
    try {
      const [allowed, remaining, resetMs, retryAfterMs] = await this.redis.sibylGcra(
        this.prefix + key,
        nowMs,
        1000 / Math.max(policy.perSecond, MIN_PER_SECOND),
        policy.burst,
      );
      return { allowed: allowed === 1, limit: policy.burst, remaining, resetMs, retryAfterMs };
    } catch (err) {
      if (nowMs - this.lastWarning > 60_000) {
        this.lastWarning = nowMs;
        this.logger.warn({ err }, 'rate limiter: Redis unreachable, using per-instance limits');
      }
      return this.fallback.take(key, policy, nowMs);
    }
  }

  /** Waits (up to `timeoutMs`) for the first connection, so a starting instance shares limits at once. */
  async waitUntilReady(timeoutMs: number): Promise<boolean> {
    if (this.redis.status === 'ready') return true;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.redis.off('ready', onReady);
        resolve(false);
      }, timeoutMs);
      const onReady = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.redis.once('ready', onReady);
    });
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
