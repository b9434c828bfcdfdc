import type { Database } from '../db/database.js';
import type { Log } from '../logger.js';
import { metrics } from '../metrics/metrics.js';
import type { PeriodicTask } from '../queue/periodic.js';
import type { LedgerConfig } from './config.js';
import { reconcileLedger, reconciliationView } from './ledger.js';

/** The ledger's upkeep: a reconciliation from scratch; a mismatch is an incident, logged as one. */
export function ledgerTasks(deps: { db: Database; log: Log; config: LedgerConfig }): PeriodicTask[] {
  const { db, log, config } = deps;
  return [
    {
      name: 'reconcile-ledger',
      intervalMs: config.reconcileIntervalMs,
      run: async () => {
        const report = await reconcileLedger(db);
        metrics.ledgerReconciled(report.ok);
        if (report.ok) log.info({ task: 'reconcile-ledger' }, 'ledger reconciles');
        else
          log.error({ task: 'reconcile-ledger', ...reconciliationView(report) }, 'LEDGER DOES NOT RECONCILE');
      },
    },
  ];
}
