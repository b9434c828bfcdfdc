import { type Statement, statement } from './database.js';

/** One retention delete: which rows of which table have ended, and what goes with each. */
export interface PruneSpec {
  /** The statement's name (prepared once per connection). */
  name: string;
  table: string;
  /** How a chosen row is found again for its delete: its key column, or `ctid` for a table without one. */
  key: string;
  /** The rows that ended before the cutoff `$1`: the condition of the table's partial index. */
  ended: string;
  /** What that index orders them by: the oldest go first. */
  orderBy: string;
  /** Rows of other tables that belong to each chosen row (`column` holds its key): deleted with it. */
  dependents?: { table: string; column: string }[];
}

/** A retention delete, with the tables it deletes from (for the order of a run: src/retention/order.ts). */
export interface PruneStatement extends Statement {
  /** The table whose ended rows it deletes. */
  readonly table: string;
  /** The tables whose rows it deletes with them (their foreign keys name `table`). */
  readonly dependents: readonly string[];
}

/**
 * The one shape of every retention delete (docs/operations.md#retention): `$1` the cutoff, `$2` the
 * most rows one statement deletes; returns one row `{ deleted }`, how many rows of `table` went.
 *
 * The rows are chosen in a CTE that reads the range of the table's partial index, oldest first, and
 * locks them `FOR UPDATE SKIP LOCKED`, passing over a row live work is changing at that moment (it is
 * looked at again next time); then they are deleted by `= ANY (ARRAY(…))`, an index lookup by key,
 * together with their dependents. `DELETE … WHERE id IN (SELECT … LIMIT $2)` was planned (generic
 * plan, PostgreSQL 15, 210,000 rows) as a hash join over a sequential scan of the whole table: 110 ms
 * a batch instead of 9 ms.
 */
export function pruneStatement(spec: PruneSpec): PruneStatement {
  const chosen = `ANY (ARRAY(SELECT ${spec.key} FROM doomed))`;
  const dependents = (spec.dependents ?? []).map(
    (dependent, i) => `, dependent_${i} AS (
       DELETE FROM ${dependent.table} WHERE ${dependent.column} = ${chosen}
     )`,
  );
  const built = statement(
    spec.name,
    `WITH doomed AS (
       SELECT ${spec.key} FROM ${spec.table} WHERE ${spec.ended}
        ORDER BY ${spec.orderBy} LIMIT $2 FOR UPDATE SKIP LOCKED
     )${dependents.join('')}, deleted AS (
       DELETE FROM ${spec.table} WHERE ${spec.key} = ${chosen} RETURNING 1
     )
     SELECT count(*) AS deleted FROM deleted`,
  );
  return {
    ...built,
    table: spec.table,
    dependents: (spec.dependents ?? []).map((dependent) => dependent.table),
  };
}
