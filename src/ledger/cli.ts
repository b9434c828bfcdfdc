import type { Database } from '../db/database.js';
import { type Output, UsageError } from '../lib/command-line.js';
import { reconcileLedger, reconciliationView } from './ledger.js';

/** `sibyl ledger reconcile`: every ledger invariant; false when one does not hold. */
export async function ledgerCommand(db: Database, out: Output, action: string): Promise<boolean> {
  if (action !== 'reconcile') throw new UsageError(`unknown ledger action "${action}"`);
  const report = await reconcileLedger(db);
  out.result(
    reconciliationView(report),
    report.ok ? 'Ledger reconciles' : 'LEDGER DOES NOT RECONCILE (run with --json for the details)',
  );
  return report.ok;
}
