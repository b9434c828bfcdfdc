/**
 * The one database interface. Two implementations: `pg` (PostgreSQL 15+) and PGlite (embedded).
 * Both return `int8` as `bigint`, `timestamptz` as `Date`, arrays as arrays, so code above this
 * line never knows which one it talks to.
 */
export interface Statement {
  /** When set, PostgreSQL prepares the statement once per connection under this name. */
  readonly name?: string;
  readonly text: string;
}

export type Sql = string | Statement;

export type Row = Record<string, unknown>;

export interface Queryable {
  query<R = Row>(sql: Sql, params?: readonly unknown[]): Promise<R[]>;
  /** Runs a multi-statement script without parameters (migrations). */
  exec(script: string): Promise<void>;
}

export interface Database extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /** The embedded database's data directory (PGlite on disk; undefined otherwise). */
  readonly dataDir?: string | undefined;
  /**
   * The embedded database: how many files and folders of its data directory, started before, were
   * open to other users and were made private by this open (docs/operations.md#the-data-directory).
   */
  readonly madePrivate?: number;
  /** Runs `fn` in one transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Calls `onNotify` for each NOTIFY on `channel` once the notifying transaction commits (send one
   * with `SELECT pg_notify(channel, payload)` inside the transaction that makes the work). After a
   * lost listening connection is restored it is called once with an empty payload, since
   * notifications sent meanwhile are lost. Resolves once listening; the function it returns stops.
   */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** A prepared-statement declaration; keep the name unique across the codebase. */
export function statement(name: string, text: string): Statement {
  return { name, text };
}

export function sqlText(sql: Sql): string {
  return typeof sql === 'string' ? sql : sql.text;
}

interface PgErrorLike {
  code?: unknown;
  constraint?: unknown;
  message?: unknown;
}

/** SQLSTATE 23505; when `constraint` is given, only a violation of that unique index. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as PgErrorLike;
  if (e.code !== '23505') return false;
  if (constraint === undefined) return true;
  // PGlite does not always fill `constraint`; its message names the index.
  return (
    e.constraint === constraint || (typeof e.message === 'string' && e.message.includes(`"${constraint}"`))
  );
}

/** SQLSTATE 23503: a row whose foreign key names no row (or a row still named, on delete). */
export function isForeignKeyViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as PgErrorLike).code === '23503';
}

/**
 * SQLSTATE class 22, data exception (a value out of its column's range, a bad cast): the statement
 * was refused for the data it carries, so it fails again whenever it is retried.
 */
export function isDataException(err: unknown): boolean {
  const code = typeof err === 'object' && err !== null ? (err as PgErrorLike).code : undefined;
  return typeof code === 'string' && code.startsWith('22');
}
