import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { reconcileLedger } from '../ledger/ledger.js';
import { PeriodicRunner, type PeriodicTask, type TaskLogger } from './periodic.js';

const AUTH_CHANGES_RETENTION = '1 day';

/** The background process (`sibyl work`): the periodic upkeep every deployment needs. */
export function createWorker(deps: {
  config: Config;
  db: Database;
  logger: TaskLogger & { warn: TaskLogger['error'] };
}) {
  const { config, db, logger } = deps;
  const tasks: PeriodicTask[] = [
    {
      // Invariants I1/I2/I6 (reliability.md §1.5), checked from scratch; a failure is an incident.
      name: 'reconcile-ledger',
      intervalMs: config.reconcileIntervalMs,
      run: async () => {
        const report = await reconcileLedger(db);
        if (report.ok) {
          logger.info({ task: 'reconcile-ledger' }, 'ledger reconciles');
        } else {
          logger.error(
            {
              task: 'reconcile-ledger',
              balanceMismatches: report.balanceMismatches.map((m) => ({
                accountId: m.accountId,
                balanceMicros: String(m.balanceMicros),
                ledgerTotalMicros: String(m.ledgerTotalMicros),
              })),
              brokenChainEntries: report.brokenChainEntries.map(String),
              invalidRefunds: report.invalidRefunds.map(String),
            },
            'LEDGER DOES NOT RECONCILE',
          );
        }
      },
    },
    {
      // The auth change feed is only read over a trailing window of seconds.
      name: 'prune-auth-changes',
      intervalMs: 60 * 60 * 1000,
      run: async () => {
        await db.query(
          `DELETE FROM auth_changes WHERE created_at < now() - interval '${AUTH_CHANGES_RETENTION}'`,
        );
      },
    },
  ];
  return new PeriodicRunner(tasks, logger);
}
