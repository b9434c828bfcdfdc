/**
 * Deposits from the chain (DESIGN §13, docs/deposits.md): the watcher (worker task with a lease),
 * its parts (RPC client, parser, value rule, scan), the operator's verbs and what the dashboard reads.
 */

export { type AssignInput, assignDeposits } from './assign.js';
export { depositsCommand } from './cli.js';
export {
  type DepositConfig,
  type DepositDisplay,
  depositDisplay,
  depositSettings,
  MAINNET_USDC_MINT,
} from './config.js';
export { type Deposit, type DepositAsset, depositsOf } from './deposits.js';
export { chainDeposits } from './funds.js';
export {
  DEPOSIT_STATUSES,
  type DepositStatus,
  listDeposits,
  presentDeposit,
  rescanRange,
} from './operator.js';
export { type DepositPrices, fixedDepositPrices, serviceDepositPrices } from './prices.js';
export { type DepositReadiness, depositReadiness } from './readiness.js';
export type { Commitment, ParsedTransaction, RpcFailure, SignatureInfo, SolanaRpc } from './rpc.js';
export { SolanaRpcError } from './rpc.js';
export {
  createSolanaRpcClient,
  isRetryable,
  type RetryEvent,
  type SolanaRpcClientOptions,
} from './rpc-client.js';
export {
  type Cursors,
  depositsAt,
  type FoundSignature,
  type ScanResult,
  scanTreasury,
  signaturesSince,
} from './scan.js';
export { type Treasury, treasuryOf } from './treasury.js';
export {
  rateFromPrice,
  USDC_PEG_HIGH,
  USDC_PEG_LOW,
  usdMicrosAt,
  type Valuation,
  valueDeposit,
} from './value.js';
export {
  type AccountWallet,
  linkedWallets,
  linkWallet,
  MAX_LINKED_WALLETS,
  unlinkWallet,
  walletLinkedBy,
} from './wallets.js';
export { createDepositWatcher, type DepositWatcher, type PollReport, type WatcherDeps } from './watcher.js';
export { type DepositWiring, depositTasks, rpcFromConfig, watcherFromConfig } from './wiring.js';
