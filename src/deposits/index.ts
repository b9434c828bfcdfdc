/**
 * Deposits from the chain (docs/deposits.md): the watcher (worker task with a lease),
 * its parts (RPC client, parser, value rule, scan), the operator's verbs and what the dashboard reads.
 */

import type { Feature } from '../feature.js';
import { depositsCommand } from './cli.js';
import { depositSettings } from './config.js';
import { depositTasks } from './wiring.js';

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

export const depositsFeature: Feature<{ deposits: typeof depositSettings }> = {
  name: 'deposits',
  settings: { deposits: depositSettings },
  worker: ({ config, db, clock, log, ports, deposits }) => ({
    // None when the watcher is off.
    tasks: depositTasks({
      db,
      clock,
      log,
      config: config.deposits,
      priceService: ports.prices,
      historical: ports.historical,
      ...deposits,
    }),
  }),
  commands: {
    deposits: {
      usage: [
        '  deposits list [--status pending|credited|unattributed|held|ignored] [--account ID] [--limit N]',
        '  deposits list --unreadable [--limit N]   transactions the watcher could not book, recorded once',
        "  deposits assign SIGNATURE ACCOUNT_ID [USD_PER_TOKEN]  credit a transaction's unattributed or held deposits, once",
        '  deposits rescan --before SIG | --since ISO   read a range of the chain again (nothing doubles)',
      ],
      async run(io, action, args) {
        await depositsCommand(await io.database(), io.out, action, args, io.config);
        return true;
      },
    },
  },
};
