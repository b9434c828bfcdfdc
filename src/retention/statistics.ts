import type { Queryable } from '../db/database.js';
import { analyzeStaleTables } from '../db/statistics.js';
import type { Log } from '../logger.js';
import type { PeriodicTask } from '../queue/periodic.js';

/**
 * The embedded database's planner statistics, kept by its worker (docs/operations.md#embedded-statistics):
 * every `intervalMs`, the tables grown by a fifth since their last ANALYZE are analyzed again. The
 * embedded database is one process, so no lease. An ANALYZE holds PGlite's one connection: at
 * 10,000 markets and 1,000,000 trades, 0.25–0.5 s for `market_trades` or `markets`, then nothing
 * until they grow again (docs/performance.md#embedded-statistics).
 */
export function embeddedStatisticsTask(deps: { db: Queryable; log: Log; intervalMs: number }): PeriodicTask {
  return {
    name: 'embedded-statistics',
    intervalMs: deps.intervalMs,
    async run() {
      const started = performance.now();
      const tables = await analyzeStaleTables(deps.db);
      if (tables.length > 0) {
        deps.log.info(
          { tables, ms: Math.round(performance.now() - started) },
          'embedded database statistics brought up to date',
        );
      }
    },
  };
}
