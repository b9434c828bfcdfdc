import type { Database } from '../../db/database.js';
import { setBounded } from '../../lib/bounded-map.js';
import type { Clock } from '../../lib/clock.js';
import type { Log } from '../../logger.js';

/** Notified at the commit of every change to what the list shows (migration 0016). */
export const LISTED_CHANNEL = 'markets_listed';
/**
 * The longest an answer is served from the cache, even without a notification: a bound on how
 * stale a page can be while notifications are lost (the listening connection is down).
 */
export const LIST_MAX_AGE_MS = 5_000;
const MAX_ENTRIES = 1_000;
/** After listening failed, the cache stays off this long before trying again. */
const LISTEN_RETRY_MS = 10_000;

/**
 * Writers in this process tell the list caches of the same database at once, when their transaction
 * has committed: the database's notification reaches PostgreSQL's listening connection a moment
 * later, and an operator who ingests and then lists through one instance must see the change.
 */
const localCaches = new WeakMap<Database, Set<() => void>>();

/** Call after the commit of a change to listed markets (ingestion, resolution, the lifecycle). */
export function listedMarketsChanged(db: Database): void {
  for (const invalidate of localCaches.get(db) ?? []) invalidate();
}

interface Entry<V> {
  value: V;
  storedAt: number;
}

/**
 * Market list pages by filter and page (and the list's totals by filter set, docs/markets.md#total),
 * shared by every caller of this instance, kept until the list changes (docs/markets.md#cache). Every change to a listed column notifies `markets_listed`
 * at its commit, whatever process makes it; the notification clears the cache. A page read before a
 * change and finished after it is not kept; concurrent misses of one page share one query. Until
 * this instance is listening (and whenever listening failed) every request reads the database.
 */
export class ListCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly inFlight = new Map<string, Promise<V>>();
  private generation = 0;
  private state: 'idle' | 'starting' | 'listening' | 'closed' = 'idle';
  private retryAt = 0;
  private unlisten: (() => Promise<void>) | undefined;
  private readonly invalidateFn = () => this.invalidate();

  constructor(private readonly deps: { db: Database; clock: Clock; log: Log; enabled: boolean }) {}

  /** The page under `key`, from the cache or from `load`. */
  get(key: string, load: () => Promise<V>): Promise<V> {
    if (!this.deps.enabled) return load();
    if (this.state !== 'listening') {
      this.start();
      return load();
    }
    const now = this.deps.clock.now().getTime();
    const entry = this.entries.get(key);
    if (entry && now >= entry.storedAt && now - entry.storedAt < LIST_MAX_AGE_MS)
      return Promise.resolve(entry.value);
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const generation = this.generation;
    const promise = load().then(
      (value) => {
        if (this.inFlight.get(key) === promise) this.inFlight.delete(key);
        if (generation === this.generation)
          setBounded(this.entries, key, { value, storedAt: now }, MAX_ENTRIES);
        return value;
      },
      (err: unknown) => {
        if (this.inFlight.get(key) === promise) this.inFlight.delete(key);
        throw err;
      },
    );
    this.inFlight.set(key, promise);
    return promise;
  }

  /** Forgets every page; reads in flight are not kept and later requests do not join them. */
  invalidate(): void {
    this.generation++;
    this.entries.clear();
    this.inFlight.clear();
  }

  async close(): Promise<void> {
    this.state = 'closed';
    localCaches.get(this.deps.db)?.delete(this.invalidateFn);
    await this.unlisten?.();
    this.unlisten = undefined;
  }

  get size(): number {
    return this.entries.size;
  }

  private start(): void {
    if (this.state !== 'idle' || Date.now() < this.retryAt) return;
    this.state = 'starting';
    this.deps.db.listen(LISTED_CHANNEL, this.invalidateFn).then(
      (unlisten) => {
        if (this.state === 'closed') {
          void unlisten();
          return;
        }
        this.unlisten = unlisten;
        let local = localCaches.get(this.deps.db);
        if (!local) {
          local = new Set();
          localCaches.set(this.deps.db, local);
        }
        local.add(this.invalidateFn);
        this.invalidate(); // changes made before listening began were not heard
        this.state = 'listening';
      },
      (err: unknown) => {
        if (this.state === 'closed') return;
        this.state = 'idle';
        this.retryAt = Date.now() + LISTEN_RETRY_MS;
        this.deps.log.warn({ err }, 'market list cache off: could not listen for market changes');
      },
    );
  }
}
