/**
 * Deposits from the chain (DESIGN §13, docs/deposits.md): the pure parts the watcher is built from.
 * The watcher itself (its table, ledger crediting, lease, CLI, metrics) is wired on top of these.
 */
export { type DepositConfig, depositSettings, MAINNET_USDC_MINT } from './config.js';
export { type Deposit, type DepositAsset, depositsOf } from './deposits.js';
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
