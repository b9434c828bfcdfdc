import type { Queryable } from './database.js';

/** Callbacks waiting for the commit of the transaction a Queryable belongs to. */
const waiting = new WeakMap<Queryable, (() => void)[]>();

/**
 * Runs `fn` once the transaction `tx` belongs to has committed, and never if it rolls back; at
 * once when `tx` is not a transaction. For effects outside the database that must only follow
 * what really happened (metrics, in-process notices), never for anything that must not be lost.
 */
export function afterCommit(tx: Queryable, fn: () => void): void {
  const list = waiting.get(tx);
  if (list) list.push(fn);
  else fn();
}

/** Database implementations: `tx` is a new transaction's handle. */
export function openCommitScope(tx: Queryable): void {
  waiting.set(tx, []);
}

/** Database implementations: the transaction of `tx` is over; `committed` says how it ended. */
export function closeCommitScope(tx: Queryable, committed: boolean): void {
  const list = waiting.get(tx) ?? [];
  waiting.delete(tx);
  if (!committed) return;
  for (const fn of list) {
    try {
      fn();
    } catch {
      // An after-commit effect cannot undo the commit; it must not fail the caller either.
    }
  }
}
