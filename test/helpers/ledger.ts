import { expect } from 'vitest';
import type { Queryable } from '../../src/db/database.js';
import { reconcileLedger } from '../../src/ledger/ledger.js';

/** Every money test ends here: balance == Σ entries, running balances chain, refunds ≤ charges. */
export async function expectLedgerReconciles(db: Queryable): Promise<void> {
  const report = await reconcileLedger(db);
  expect(report).toEqual({ ok: true, balanceMismatches: [], brokenChainEntries: [], invalidRefunds: [] });
}

export async function balanceOf(db: Queryable, accountId: string): Promise<bigint> {
  const [row] = await db.query<{ balance_micros: bigint }>(
    'SELECT balance_micros FROM accounts WHERE id = $1',
    [accountId],
  );
  if (!row) throw new Error(`no account ${accountId}`);
  return row.balance_micros;
}

export async function countEntries(db: Queryable, accountId: string, kind: string): Promise<number> {
  const [row] = await db.query<{ n: bigint }>(
    'SELECT count(*) AS n FROM ledger_entries WHERE account_id = $1 AND kind = $2',
    [accountId, kind],
  );
  return Number(row?.n ?? 0);
}
