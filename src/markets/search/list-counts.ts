import { type Database, statement } from '../../db/database.js';
import type { PeriodicTask } from '../../queue/periodic.js';

/**
 * The markets per (status, category) as the database keeps them (migration 0039): rows of
 * differences, one added by each statement that changes markets. The list's `total` of a request
 * filtered by nothing else than the status and the category is their sum (docs/markets.md#kept-list-count).
 */

/**
 * Folds the rows this statement's snapshot sees into one per (status, category), in one statement:
 * a row another transaction adds meanwhile is not seen, so not deleted, and still counts once.
 */
export const FOLD = statement(
  'markets_list_counts_fold',
  `WITH gone AS (DELETE FROM market_list_counts RETURNING status, category, n)
   INSERT INTO market_list_counts (status, category, n)
   SELECT status, category, sum(n) FROM gone GROUP BY status, category HAVING sum(n) <> 0
   ORDER BY status, category`,
);

/** How often the markets worker folds the rows: a minute's market changes are a few rows each. */
const FOLD_INTERVAL_MS = 60_000;

export function listCountsTask(db: Database): PeriodicTask {
  return {
    name: 'market-list-counts',
    intervalMs: FOLD_INTERVAL_MS,
    async run() {
      await db.query(FOLD);
    },
  };
}
