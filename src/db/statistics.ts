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
