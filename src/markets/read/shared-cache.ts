import type { Redis } from 'ioredis';
import { createRedisClient } from '../../lib/redis.js';
import type { Log } from '../../logger.js';
import { DETAIL_CACHE_TIMEOUT_MS } from '../config.js';

/** A detail as another instance cached it: the value and when it was computed (the app's clock). */
export interface SharedEntry<V> {
  value: V;
  storedAt: number;
}

/**
 * Where API instances share the market details they computed, so that the fleet computes each
 * market at most about once a minute, not each instance. Best effort: a failure reads as a miss.
 */
export interface SharedDetailStore<V> {
  get(idOrSlug: string): Promise<SharedEntry<V> | null>;
  put(value: V, storedAt: number, ttlMs: number): Promise<void>;
  close(): Promise<void>;
}

const WARN_EVERY_MS = 60_000;

/**
 * The shared detail cache in Redis (`REDIS_URL`): one key per market id and one per slug, each
 * holding `{ storedAt, value }` and expiring with the detail. Commands time out after `timeoutMs`
 * (MARKETS_DETAIL_CACHE_TIMEOUT_MS, 250 ms by default) and are never queued while Redis is away: the
 * detail is then computed here, as without Redis.
 */
export class RedisDetailStore<V extends { id: string; slug: string }> implements SharedDetailStore<V> {
  private readonly redis: Redis;
  private lastWarning = 0;
  private readonly connected: Promise<void>;

  constructor(
    url: string,
    private readonly log: Pick<Log, 'warn'>,
    private readonly prefix: string,
    timeoutMs: number = DETAIL_CACHE_TIMEOUT_MS,
  ) {
    this.redis = createRedisClient(url, {
      commandTimeoutMs: timeoutMs,
      connectTimeoutMs: Math.max(2000, timeoutMs),
    });
    // The first requests after start wait briefly for the first connection instead of all missing;
    // after that, a Redis that is away is a miss at once.
    this.connected = new Promise((resolve) => {
      const timer = setTimeout(resolve, 2 * timeoutMs);
      timer.unref();
      this.redis.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  async get(idOrSlug: string): Promise<SharedEntry<V> | null> {
    await this.connected;
    if (this.redis.status !== 'ready') return null;
    try {
      const text = await this.redis.get(this.prefix + idOrSlug);
      return text === null ? null : (JSON.parse(text) as SharedEntry<V>);
    } catch (err) {
      this.warn(err);
      return null;
    }
  }

  async put(value: V, storedAt: number, ttlMs: number): Promise<void> {
    const text = JSON.stringify({ storedAt, value });
    const ttl = Math.max(1, Math.round(ttlMs));
    await this.connected;
    if (this.redis.status !== 'ready') return;
    try {
      await this.redis
        .multi()
        .set(this.prefix + value.id, text, 'PX', ttl)
        .set(this.prefix + value.slug, text, 'PX', ttl)
        .exec();
    } catch (err) {
      this.warn(err);
    }
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }

  private warn(err: unknown): void {
    const now = Date.now();
    if (now - this.lastWarning < WARN_EVERY_MS) return;
    this.lastWarning = now;
    this.log.warn(
      { err: (err as Error).message },
      'market detail cache: Redis unavailable, computing locally',
    );
  }
}
