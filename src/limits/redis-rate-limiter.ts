import { Redis } from 'ioredis';
import type { Log } from '../logger.js';
import {
  type LocalRateLimiter,
  MIN_PER_SECOND,
  type RateLimitDecision,
  type RateLimiter,
  type RateLimitPolicy,
} from './rate-limiter.js';

// The same GCRA step as gcraStep(), atomically inside Redis so every API instance shares a bucket.
// Returns integers (Redis truncates Lua numbers): allowed, remaining, resetMs, retryAfterMs.
const GCRA_SCRIPT = `
local now = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local stored = redis.call('GET', KEYS[1])
local tat = now
if stored then tat = math.max(tonumber(stored), now) end
local newTat = tat + interval
local allowAt = newTat - burst * interval
if now < allowAt then
  return {0, 0, math.ceil(tat - now), math.ceil(allowAt - now)}
end
redis.call('SET', KEYS[1], tostring(newTat), 'PX', math.ceil(newTat - now) + 1000)
return {1, math.floor((now - allowAt) / interval + 1e-9), math.ceil(newTat - now), 0}
`;

type GcraRedis = Redis & {
  sibylGcra(
    key: string,
    now: number,
    interval: number,
    burst: number,
  ): Promise<[number, number, number, number]>;
};

/**
 * Buckets in Redis, shared by every API instance. Policy when Redis cannot be reached: fall back to
 * this instance's own buckets (limits still hold per instance, nothing fails), log it at most once
 * a minute, and go back to Redis as soon as it answers again.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly redis: GcraRedis;
  private lastWarning = 0;

  constructor(
    url: string,
    private readonly fallback: LocalRateLimiter,
    private readonly logger: Pick<Log, 'warn'>,
    private readonly prefix = 'sibyl:rl:',
  ) {
    const redis = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 2000,
      commandTimeout: 250,
      lazyConnect: false,
    });
    redis.on('error', () => {}); // surfaced per command below; the client reconnects by itself
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
