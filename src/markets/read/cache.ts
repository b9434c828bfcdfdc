import { setBounded } from '../../lib/bounded-map.js';
import type { Clock } from '../../lib/clock.js';
import type { SharedDetailStore } from './shared-cache.js';

/** The market detail is computed at most once a minute per market (per API instance). */
export const DETAIL_TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;

interface Entry<V> {
  value: V;
  storedAt: number;
}

/**
 * Market details by id, shared by every caller: an answer may be up to a minute old, which is
 * what the API promises, and nothing else depends on it — a miss computes the detail from the
 * database. Slugs are remembered as aliases of ids, so a detail asked for by either is one entry.
 * Concurrent misses for one key share one computation. Time comes from the injected clock, so
 * tests move it instead of waiting; a clock that moves backwards makes entries stale.
 *
 * With a shared store (Redis), a local miss first asks the store: a detail another instance
 * computed less than a minute ago (by the time it was computed, not when it was stored) is used
 * and kept here until that minute ends, so no answer is ever older than a minute.
 */
export class DetailCache<V extends { id: string; slug: string }> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly slugs = new Map<string, string>();
  private readonly inFlight = new Map<string, Promise<V | null>>();

  constructor(
    private readonly load: (idOrSlug: string) => Promise<V | null>,
    private readonly clock: Clock,
    private readonly ttlMs = DETAIL_TTL_MS,
    private readonly maxEntries = MAX_ENTRIES,
    private readonly shared?: SharedDetailStore<V>,
  ) {}

  /** The detail, or null for an unknown market (not cached: a new market shows at once). */
  get(idOrSlug: string): Promise<V | null> {
    const now = this.clock.now().getTime();
    const entry = this.entries.get(idOrSlug) ?? this.entries.get(this.slugs.get(idOrSlug) ?? '');
    if (entry && now >= entry.storedAt && now - entry.storedAt < this.ttlMs)
      return Promise.resolve(entry.value);
    const pending = this.inFlight.get(idOrSlug);
    if (pending) return pending;
    const promise = this.loadThrough(idOrSlug, now).then(
      (entry) => {
        this.inFlight.delete(idOrSlug);
        if (entry) this.store(entry.value, entry.storedAt);
        return entry?.value ?? null;
      },
      (err: unknown) => {
        this.inFlight.delete(idOrSlug);
        throw err;
      },
    );
    this.inFlight.set(idOrSlug, promise);
    return promise;
  }

  private async loadThrough(idOrSlug: string, now: number): Promise<Entry<V> | null> {
    if (this.shared) {
      const hit = await this.shared.get(idOrSlug);
      if (hit && now >= hit.storedAt && now - hit.storedAt < this.ttlMs) return hit;
    }
    const value = await this.load(idOrSlug);
    if (!value) return null;
    await this.shared?.put(value, now, this.ttlMs);
    return { value, storedAt: now };
  }

  private store(value: V, storedAt: number): void {
    setBounded(this.entries, value.id, { value, storedAt }, this.maxEntries);
    if (this.slugs.size >= this.maxEntries) this.slugs.clear();
    this.slugs.set(value.slug, value.id);
  }

  get size(): number {
    return this.entries.size;
  }
}
