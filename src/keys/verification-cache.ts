import type { Queryable } from '../db/database.js';
import { setBounded } from '../lib/bounded-map.js';
import { type Clock, systemClock } from '../lib/clock.js';
import type { Log } from '../logger.js';

interface Entry<V> {
  value: V;
  accountId: string | null;
  storedAt: number;
}

const CHANGES_SINCE = `SELECT id, account_id FROM auth_changes WHERE created_at > $1 ORDER BY id`;
const DB_NOW = 'SELECT clock_timestamp() AS now';

/**
 * Key verifications cached per key hash, so an authenticated request does not cost a database
 * round trip. Correctness does not depend on it: entries live at most `ttlMs`, and every instance
 * polls `auth_changes` every `syncMs` and drops the entries of any account that changed, so a
 * revocation reaches every instance within about one poll interval. If polling fails the cache is
 * emptied, so a database outage can never keep a revoked key alive.
 */
export class VerificationCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly inFlight = new Map<string, Promise<V>>();
  private readonly seenChanges = new Map<string, number>();
  private since: Date | null = null;
  /** Raised by every eviction: a load that started before one may hold pre-change data. */
  private generation = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  private readonly listeners: ((accountId: string) => void)[] = [];

  constructor(
    private readonly options: { ttlMs: number; maxEntries: number; syncMs: number },
    private readonly clock: Clock = systemClock,
  ) {}

  private now(): number {
    return this.clock.now().getTime();
  }

  /**
   * The cached value (synchronously, on the hot path), or a promise of `load()`'s, sharing one load
   * among concurrent callers.
   */
  get(hash: string, load: () => Promise<{ value: V; accountId: string | null }>): V | Promise<V> {
    const entry = this.entries.get(hash);
    if (entry && this.now() - entry.storedAt < this.options.ttlMs) return entry.value;
    const pending = this.inFlight.get(hash);
    if (pending) return pending;
    const startedAt = this.generation;
    const promise = load().then(
      ({ value, accountId }) => {
        if (this.inFlight.get(hash) === promise) this.inFlight.delete(hash);
        // Read before an eviction: answer this caller, but do not keep it.
        if (this.generation === startedAt) this.store(hash, { value, accountId, storedAt: this.now() });
        return value;
      },
      (err: unknown) => {
        if (this.inFlight.get(hash) === promise) this.inFlight.delete(hash);
        throw err;
      },
    );
    this.inFlight.set(hash, promise);
    return promise;
  }

  private store(hash: string, entry: Entry<V>): void {
    if (this.options.ttlMs === 0) return;
    setBounded(this.entries, hash, entry, this.options.maxEntries);
  }

  evictAccount(accountId: string): void {
    this.generation++;
    // Requests arriving from now on must not join a load that may have read pre-change data.
    this.inFlight.clear();
    for (const [hash, entry] of this.entries) {
      if (entry.accountId === accountId) this.entries.delete(hash);
    }
    for (const listener of this.listeners) listener(accountId);
  }

  /**
   * Calls `listener` with each account whose keys or status changed, once its entries are dropped:
   * what was admitted earlier and is still running (an open event stream) is checked again.
   */
  onAccountChange(listener: (accountId: string) => void): void {
    this.listeners.push(listener);
  }

  clear(): void {
    this.generation++;
    this.inFlight.clear();
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * Applies every change committed before the call: when it resolves, the cache holds nothing a
   * change then committed made stale. A call made while a poll runs waits for it and then polls
   * again (that poll may have read the feed before the caller's change committed); calls made
   * meanwhile share that one follow-up.
   */
  sync(db: Queryable, windowMs = 10_000): Promise<void> {
    if (!this.running) {
      this.running = this.poll(db, windowMs).finally(() => {
        this.running = undefined;
      });
      return this.running;
    }
    this.queued ??= this.running
      .catch(() => {})
      .then(() => {
        this.queued = undefined;
        return this.sync(db, windowMs);
      });
    return this.queued;
  }

  /**
   * One poll of the change feed. Rows are read over a trailing window rather than after the last
   * id, because identity values are assigned before commit: a transaction that commits late can
   * appear with a smaller id than one already seen.
   */
  private async poll(db: Queryable, windowMs: number): Promise<void> {
    try {
      const [row] = await db.query<{ now: Date }>(DB_NOW);
      const dbNow = (row as { now: Date }).now;
      const from = new Date((this.since ?? dbNow).getTime() - windowMs);
      const changes = await db.query<{ id: bigint; account_id: string }>(CHANGES_SINCE, [from]);
      for (const change of changes) {
        const id = String(change.id);
        if (this.seenChanges.has(id)) continue;
        this.seenChanges.set(id, dbNow.getTime());
        this.evictAccount(change.account_id);
      }
      for (const [id, seenAt] of this.seenChanges) {
        if (seenAt < dbNow.getTime() - 3 * windowMs) this.seenChanges.delete(id);
      }
      this.since = dbNow;
    } catch (err) {
      this.clear();
      throw err;
    }
  }

  startSync(db: Queryable, logger: Pick<Log, 'warn'>): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.sync(db).catch((err: unknown) => {
        logger.warn({ err }, 'auth cache sync failed; cache emptied');
      });
    }, this.options.syncMs);
    this.timer.unref();
  }

  stopSync(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
