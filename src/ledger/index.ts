/** The append-only ledger, charges, refunds, reconciliation: the room's door. */
import type { Feature } from '../feature.js';
import { ledgerCommand } from './cli.js';
import { ledgerSettings } from './config.js';
import { ledgerTasks } from './tasks.js';

export { adjustCommand } from './adjust-cli.js';
export { BalanceHints } from './balance-hints.js';
export { type Biller, type BillingOutcome, directBiller } from './biller.js';
export {
  balanceOf,
  type Charged,
  ChargeRefusedError,
  type ChargeRequest,
  type ChargingContext,
  charge,
} from './charge.js';
export { CoalescingBiller } from './coalescing-biller.js';
export { creditDeposits, type DepositCredit } from './deposit-batch.js';
export { ENTRY_KINDS, type EntryKind, type HistoryQuery, listTransactions } from './history.js';
export { creditDeposit, creditUpTo, getBalance, refundCharge } from './ledger.js';
export { TransactionList, TransactionQuery, UsageQuery, UsageReport } from './schemas.js';
export { accountUsage } from './usage.js';

export const ledgerFeature: Feature<{ ledger: typeof ledgerSettings }> = {
  name: 'ledger',
  settings: { ledger: ledgerSettings },
  async api(app) {
    const { ledgerRoutes } = await import('./routes.js');
    ledgerRoutes(app);
  },
  worker: ({ config, db, log }) => ({ tasks: ledgerTasks({ db, log, config: config.ledger }) }),
  commands: {
    ledger: {
      usage: ['  ledger reconcile                        check every ledger invariant'],
      run: async (io, action) => ledgerCommand(await io.database(), io.out, action),
    },
  },
};
