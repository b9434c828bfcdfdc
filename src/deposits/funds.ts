import type { DepositSource, DepositView } from '../dashboard/index.js';
import { type DepositRow, listDeposits, presentDeposit } from './operator.js';

/**
 * The dashboard's funds page when the watcher runs: the account's deposits from the chain, pending
 * first as they arrive, then final (credited, held, ignored), newest first.
 */
export const chainDeposits: DepositSource = {
  watching: true,
  async list(ctx, accountId) {
    const rows: DepositRow[] = await listDeposits(ctx.db, { accountId, limit: 50 });
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
