import { Redis } from 'ioredis';

export interface RedisClientOptions {
  /** How long one command may take before it fails (and its caller falls back). */
  commandTimeoutMs: number;
  /** How long a connection attempt may take (2 s by default). */
  connectTimeoutMs?: number;
}

/**
 * The one way Sibyl makes a Redis client (the rate limiter, the stream slots, the market detail
 * cache): every use of Redis is best effort, with a fallback of its own, so a command is never
 * queued while Redis is away (`enableOfflineQueue: false`) nor retried (`maxRetriesPerRequest: 0`):
 * it fails at once or within `commandTimeoutMs`, and the caller falls back. Connection errors are
 * surfaced per command; the client reconnects by itself.
 */
export function createRedisClient(url: string, options: RedisClientOptions): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: options.connectTimeoutMs ?? 2000,
    commandTimeout: options.commandTimeoutMs,
  });
  redis.on('error', () => {}); // surfaced per command by its caller
  return redis;
}
