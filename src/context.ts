import type { Database, Queryable } from './db/database.js';
import type { Clock } from './lib/clock.js';

/**
 * Who acts through an API key, as far as a verb reads it: its key and account (the keys room's
 * `Principal` is one). Stated here, below the rooms, so that the context names no feature.
 */
export interface Actor {
  readonly keyId: string;
  readonly accountId: string;
}

/**
 * What every domain verb runs in: the database (or the transaction in progress), the clock, and who
 * acts. Verbs take one context instead of long positional argument lists, and a verb that needs a
 * transaction joins the caller's when there is one, so a charge, the rows it pays for and the
 * outbox row that reports them commit together or not at all.
 */
export interface Context {
  /** The pool: what opens a transaction when none is in progress. */
  readonly db: Database;
  /** The transaction in progress, or null outside one. */
  readonly tx: Queryable | null;
  readonly clock: Clock;
  /** The API key acting; absent for the operator (CLI) and the worker. */
  readonly principal?: Actor | undefined;
  /** The HTTP request this work belongs to, when there is one. */
  readonly requestId?: string | undefined;
}

/** A context inside a transaction. */
export type TxContext = Context & { readonly tx: Queryable };

export function createContext(
  db: Database,
  clock: Clock,
  extra: { principal?: Actor | undefined; requestId?: string | undefined } = {},
): Context {
  return { db, tx: null, clock, ...extra };
}

/** Where a verb's statements go: the transaction in progress, else the pool. */
export function queryable(ctx: Context): Queryable {
  return ctx.tx ?? ctx.db;
}

/**
 * Runs `fn` in a transaction: the caller's when one is in progress (so nested verbs commit with it),
 * else a new one that commits when `fn` resolves and rolls back when it throws.
 */
export function withTransaction<T>(ctx: Context, fn: (ctx: TxContext) => Promise<T>): Promise<T> {
  if (ctx.tx) return fn(ctx as TxContext);
  return ctx.db.transaction((tx) => fn({ ...ctx, tx }));
}
