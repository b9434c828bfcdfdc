import type { Queryable } from './database.js';

/**
 * The planner statistics of the embedded database (docs/operations.md#embedded-statistics). PGlite
 * runs single-user, so autovacuum never runs there: without an ANALYZE the planner knows a table's
 * size but nothing of its columns (no distinct counts, common values or histograms). On a database
 * grown from empty to 10,000 markets and 1,000,000 trades the list and search reads ran 10–30 %
 * slower than after an ANALYZE (history and trades, primary-key reads, did not change)
 * (docs/performance.md#embedded-statistics). PostgreSQL's autovacuum does this itself.
 */

/** A table is analyzed again once it has grown by this fraction since its last ANALYZE. */
export const GROWTH = 0.2;
/** Tables smaller than this many pages (8 kB each) are left alone: any plan reads them quickly. */
export const MIN_PAGES = 16;

/**
 * The tables of the current schema that have never been analyzed, or have grown by more than $2
 * (a fraction) since (`relpages` is the page count the last ANALYZE saw), and hold at least $1
 * pages. Growth, not a count of changed rows: PGlite's statistics counters start again at each
 * opening, the catalog does not.
 */
const STALE_TABLES = `SELECT format('%I', c.relname) AS name
   FROM pg_class c
   JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = current_schema() AND c.relkind = 'r'
    AND pg_relation_size(c.oid) >= $1::bigint * current_setting('block_size')::bigint
    AND (c.reltuples < 0
         OR pg_relation_size(c.oid) > (1 + $2::float8) * c.relpages * current_setting('block_size')::bigint)
  ORDER BY c.relname`;

/** ANALYZEs each stale table (STALE_TABLES), one statement each; returns their names. */
export async function analyzeStaleTables(db: Queryable): Promise<string[]> {
  const stale = await db.query<{ name: string }>(STALE_TABLES, [MIN_PAGES, GROWTH]);
  for (const { name } of stale) await db.exec(`ANALYZE ${name}`);
  return stale.map((t) => t.name);
}

/** autovacuum's own rule: VACUUM once dead row versions exceed 50 + a fifth of the table's rows. */
export const VACUUM_BASE = 50;
export const VACUUM_SCALE = 0.2;
/**
 * PostgreSQL's `vacuum_freeze_table_age` default: a table whose oldest unfrozen transaction id is
 * older than this is vacuumed with FREEZE, so the database never nears wraparound protection (at
 * about 2,000,000,000 it stops accepting writes).
 */
export const FREEZE_AGE = 150_000_000;

/** Why a table is vacuumed (docs/operations.md#embedded-statistics). */
export type VacuumReason = 'dead-rows' | 'no-visibility-map' | 'freeze';

/**
 * The tables of the current schema that need a VACUUM, with autovacuum's rules as far as PGlite
 * gives them: age(relfrozenxid) over $4 (→ FREEZE); at least $1 pages and none marked all-visible
 * (`relallvisible` = 0: never vacuumed, e.g. after a load — PGlite keeps no `last_vacuum` across
 * openings, the catalog keeps this); dead row versions over $2 + $3 × its rows
 * (`n_dead_tup`: counted since this opening only, PGlite's counters start again at each).
 */
const TABLES_TO_VACUUM = `SELECT format('%I', c.relname) AS name,
        CASE WHEN age(c.relfrozenxid) > $4::bigint THEN 'freeze'
             WHEN COALESCE(s.n_dead_tup, 0) > $2::float8 + $3::float8 * GREATEST(c.reltuples, COALESCE(s.n_live_tup, 0))
               THEN 'dead-rows'
             ELSE 'no-visibility-map' END AS reason
   FROM pg_class c
   JOIN pg_namespace n ON n.oid = c.relnamespace
   LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
  WHERE n.nspname = current_schema() AND c.relkind = 'r'
    AND (age(c.relfrozenxid) > $4::bigint
         OR COALESCE(s.n_dead_tup, 0) > $2::float8 + $3::float8 * GREATEST(c.reltuples, COALESCE(s.n_live_tup, 0))
         OR (c.relallvisible = 0
             AND pg_relation_size(c.oid) >= $1::bigint * current_setting('block_size')::bigint))
  ORDER BY c.relname`;

/**
 * VACUUMs, one statement each, the tables that need it (TABLES_TO_VACUUM); returns them with the
 * reason. `VACUUM (ANALYZE)`: a VACUUM sets the page count analyzeStaleTables measures growth from,
 * so it analyzes too; FREEZE for the wraparound rule. VACUUM cannot run in a transaction: `db`
 * must not be one. `freezeAge` is a parameter for tests (no test can consume 150,000,000 ids).
 */
export async function vacuumTables(
  db: Queryable,
  freezeAge: number = FREEZE_AGE,
): Promise<{ name: string; reason: VacuumReason }[]> {
  // The statistics counters reach pg_stat_user_tables when a backend flushes them: now.
  await db.query('SELECT pg_stat_force_next_flush()');
  const tables = await db.query<{ name: string; reason: VacuumReason }>(TABLES_TO_VACUUM, [
    MIN_PAGES,
    VACUUM_BASE,
    VACUUM_SCALE,
    freezeAge,
  ]);
  for (const { name, reason } of tables)
    await db.exec(reason === 'freeze' ? `VACUUM (FREEZE, ANALYZE) ${name}` : `VACUUM (ANALYZE) ${name}`);
  return tables;
}
