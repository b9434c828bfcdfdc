import type { Queryable } from '../db/database.js';
import { analyzeStaleTables, vacuumTables } from '../db/statistics.js';
import type { Log } from '../logger.js';
import type { PeriodicTask } from '../queue/periodic.js';

/**
 * The embedded database's upkeep in autovacuum's place, kept by its worker
 * (docs/operations.md#embedded-statistics): every `intervalMs`, the tables that need a VACUUM
 * (dead rows, never vacuumed, or old transaction ids to freeze) get `VACUUM (ANALYZE)`, then the
 * others grown by a fifth since their last ANALYZE are analyzed again. The embedded database is one
 * process, so no lease. Each statement holds PGlite's one connection: at 10,000 markets and
 * 1,000,000 trades, 0.25–0.5 s for an ANALYZE of `market_trades` or `markets`, more for a first
 * VACUUM of `market_trades`, then nothing until they change again (docs/performance.md#embedded-statistics).
 */
export function embeddedStatisticsTask(deps: { db: Queryable; log: Log; intervalMs: number }): PeriodicTask {
  return {
    name: 'embedded-statistics',
    intervalMs: deps.intervalMs,
    async run() {
      const started = performance.now();
      const vacuumed = await vacuumTables(deps.db);
      const tables = await analyzeStaleTables(deps.db);
      if (vacuumed.length > 0 || tables.length > 0) {
        // One line a run that did something: `vacuumed` (with why), `tables` analyzed.
        deps.log.info(
          { vacuumed, tables, ms: Math.round(performance.now() - started) },
          'embedded database statistics brought up to date',
        );
      }
    },
  };
}
