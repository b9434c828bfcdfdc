import type { Redis } from 'ioredis';
import { createRedisClient } from '../../lib/redis.js';
import type { Log } from '../../logger.js';
import {
  type HeldSlots,
  LEASE_MS,
  type LocalStreamSlots,
  type SlotRefusal,
  type SlotScope,
  type StreamSlots,
} from './slots.js';

/**
 * One sorted set per scope: member the stream's id, score its lease's end (ms, the instances'
 * clocks — skew between them shortens or lengthens a lease by the skew, against 30 s). Expired
 * members go in the same script that admits, so a count never includes a dead instance's streams
 * for longer than their lease, and a stream is admitted in every scope or in none. A scope that
 * nobody touches disappears with its key's expiry. Returns {0, 0} when admitted, else the 1-based
 * index of the full scope and its count.
 */
const TAKE_SCRIPT = `
local now = tonumber(ARGV[1])
local member = ARGV[3]
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  local open = redis.call('ZCARD', key)
  if open >= tonumber(ARGV[3 + i]) and not redis.call('ZSCORE', key, member) then
    return {i, open}
  end
end
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, ARGV[2], member)
  redis.call('PEXPIRE', key, ARGV[4 + #KEYS])
end
return {0, 0}
`;

type SlotsRedis = Redis & {
  sibylTakeSlots(...args: (string | number)[]): Promise<[number, number]>;
};

/**
 * Stream slots in Redis, shared by every API instance. Policy when Redis cannot be reached, as the
 * rate limiter's: a stream admitted meanwhile is counted in this instance only (it is never refused
 * for want of Redis), logged at most once a minute; Redis is used again as soon as it answers.
 */
export class RedisStreamSlots implements StreamSlots {
  private readonly redis: SlotsRedis;
  /** Streams admitted by the fallback: released there. */
  private readonly local = new Set<string>();
  private lastWarning = 0;

  constructor(
    url: string,
    private readonly fallback: LocalStreamSlots,
    private readonly logger: Pick<Log, 'warn'>,
    private readonly prefix = 'sibyl:{streams}:',
  ) {
    const redis = createRedisClient(url, { commandTimeoutMs: 500 });
    redis.defineCommand('sibylTakeSlots', { lua: TAKE_SCRIPT });
    this.redis = redis as SlotsRedis;
  }

  private key(scope: SlotScope): string {
    return `${this.prefix}${scope.limit}:${scope.owner}`;
  }

  async take(id: string, scopes: readonly SlotScope[], nowMs: number): Promise<SlotRefusal | null> {
    try {
      const keys = scopes.map((scope) => this.key(scope));
      const [index, open] = await this.redis.sibylTakeSlots(
        keys.length,
        ...keys,
        nowMs,
        nowMs + LEASE_MS,
        id,
        ...scopes.map((scope) => scope.max),
        2 * LEASE_MS,
      );
      const scope = index > 0 ? scopes[index - 1] : undefined;
      return scope ? { scope, open } : null;
    } catch (err) {
      this.warn(err, nowMs);
      const refusal = await this.fallback.take(id, scopes);
      if (!refusal) this.local.add(id);
      return refusal;
    }
  }

  async renew(held: readonly HeldSlots[], nowMs: number): Promise<void> {
    const members = new Map<string, (string | number)[]>();
    for (const stream of held) {
      if (this.local.has(stream.id)) continue;
      for (const scope of stream.scopes) {
        const key = this.key(scope);
        members.set(key, [...(members.get(key) ?? []), nowMs + LEASE_MS, stream.id]);
      }
    }
    if (members.size === 0) return;
    const pipeline = this.redis.pipeline();
    for (const [key, scored] of members) pipeline.zadd(key, ...scored).pexpire(key, 2 * LEASE_MS);
    // A failed renewal leaves the slots until their lease ends; the next renewal tries again.
    try {
      const failed = (await pipeline.exec())?.find(([err]) => err)?.[0];
      if (failed) this.warn(failed, nowMs);
    } catch (err) {
      this.warn(err, nowMs);
    }
  }

  async release(id: string, scopes: readonly SlotScope[]): Promise<void> {
    if (this.local.delete(id)) return this.fallback.release(id, scopes);
    const pipeline = this.redis.pipeline();
    for (const scope of scopes) pipeline.zrem(this.key(scope), id);
    // Unreachable now: the lease ends the slot within LEASE_MS.
    await pipeline.exec().catch(() => {});
  }

  /** Waits (up to `timeoutMs`) for the first connection, so a starting instance counts in Redis at once. */
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

  private warn(err: unknown, nowMs: number): void {
    if (nowMs - this.lastWarning < 60_000) return;
    this.lastWarning = nowMs;
    this.logger.warn({ err }, 'event streams: Redis unreachable, counting streams per instance');
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
