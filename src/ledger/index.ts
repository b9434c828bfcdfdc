/** The append-only ledger, charges, refunds, reconciliation: the room's door. */
export {
  type BalanceAlert,
  emitBalanceAlerts,
  getAlertSettings,
  MAX_LOW_BALANCE_THRESHOLDS,
  noteRefusal,
  setAlertSettings,
} from './alerts.js';
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
export { creditDeposits } from './deposit-batch.js';
export { ENTRY_KINDS, type EntryKind, type HistoryQuery, listTransactions } from './history.js';
export { adjustBalance, creditDeposit, creditUpTo, getBalance, refundCharge } from './ledger.js';
export { TransactionQuery } from './schemas.js';
export { accountUsage } from './usage.js';
