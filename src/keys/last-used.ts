import type { Queryable } from '../db/database.js';
import * as sql from './sql.js';

/** `lastUsedAt` is kept to the minute: a key in constant use costs one small write a minute. */
export const LAST_USED_RESOLUTION_MS = 60_000;

/** Keys remembered before the ones not seen for a minute are forgotten (they are written again when seen). */
const REMEMBERED_KEYS = 10_000;

/**
 * When each key was last used (docs/api.md#api-keys): a request that authenticates costs a map lookup;
 * at most once a minute per key, this process writes the time with one guarded UPDATE that never
 * moves it back (instances write independently). The write is not awaited by the request, and a
 * failed one is reported, not thrown: the answer never waits for, or fails on, bookkeeping.
 */
export class KeyUses {
  readonly #written = new Map<string, number>();
  readonly #writing = new Set<Promise<unknown>>();

  constructor(
    private readonly db: Queryable,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  seen(keyId: string, nowMs: number): void {
    const last = this.#written.get(keyId);
    if (last !== undefined && nowMs - last < LAST_USED_RESOLUTION_MS) return;
    if (this.#written.size >= REMEMBERED_KEYS) this.#forget(nowMs);
    this.#written.set(keyId, nowMs);
    const write: Promise<unknown> = this.db
      .query(sql.TOUCH_LAST_USED, [keyId, new Date(nowMs)])
      .catch(this.onError)
      .finally(() => this.#writing.delete(write));
    this.#writing.add(write);
  }

  /** Resolves once the writes under way are done (closing waits for them). */
  async idle(): Promise<void> {
    await Promise.all(this.#writing);
  }

  #forget(nowMs: number): void {
    for (const [keyId, at] of this.#written) {
      if (nowMs - at >= LAST_USED_RESOLUTION_MS) this.#written.delete(keyId);
    }
  }
}
