import { type Context, queryable } from '../context.js';
import { type DepositRow, listDeposits, presentDeposit } from './operator.js';

/** One deposit as docs/deposits.md#statuses describes it; the fields only the chain knows are null until the watcher lands. */
export interface DepositView {
  id: string;
  status: 'pending' | 'credited' | 'held' | 'ignored';
  token: 'SOL' | 'USDC' | null;
  amount: string | null;
  /** Null while pending: a deposit is valued at its finalization. */
  usdValue: string | null;
  rateUsd: string | null;
  signature: string | null;
  slot: number | null;
  reference: string | null;
  memo: string | null;
  createdAt: string;
}

/**
 * Where the funds page's deposits come from. The seam for the deposit watcher (docs/deposits.md#the-watcher): until
 * it lands, the ledger's deposit entries, all credited (by the operator, or play money).
 */
export interface DepositSource {
  /** Whether deposits are credited from the chain. */
  watching: boolean;
  list(ctx: Context, accountId: string): Promise<DepositView[]>;
}

/**
 * The dashboard's funds page when the watcher runs: the account's deposits from the chain, pending
 * first as they arrive, then final (credited, held, ignored), newest first.
 */
export const chainDeposits: DepositSource = {
  watching: true,
  async list(ctx, accountId) {
    const rows: DepositRow[] = await listDeposits(queryable(ctx), { accountId, limit: 50 });
    return rows
      .filter((row) => row.status !== 'unattributed')
      .map((row): DepositView => {
        const view = presentDeposit(row);
        return {
          id: row.reference,
          status: row.status as DepositView['status'],
          token: row.asset,
          amount: view.amount,
          usdValue: row.status === 'pending' ? null : view.usdValue,
          rateUsd: view.rateUsd,
          signature: row.signature,
          slot: view.slot,
          reference: row.reference,
          memo: null,
          createdAt: view.seenAt,
        };
      });
  },
};
