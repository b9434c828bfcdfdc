import type { Database } from '../db/database.js';
import type { HistoricalService } from '../historical/index.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../logger.js';
import type { PriceService } from '../prices/index.js';
import type { PeriodicTask } from '../queue/periodic.js';
import type { DepositConfig } from './config.js';
import { depositMetrics } from './metrics.js';
import { type DepositPrices, serviceDepositPrices } from './prices.js';
import type { SolanaRpc } from './rpc.js';
import { createSolanaRpcClient } from './rpc-client.js';
import { treasuryOf } from './treasury.js';
import { createDepositWatcher, type DepositWatcher } from './watcher.js';

/** The configured RPC client, its retries counted in the metrics. */
export function rpcFromConfig(config: DepositConfig): SolanaRpc | null {
  if (config.watch === null) return null;
  return createSolanaRpcClient({
    url: config.watch.rpcUrl,
    ...config.rpc,
    onRetry: (event) => depositMetrics.rpcError(event.error.kind),
  });
}

export interface DepositWiring {
  db: Database;
  clock: Clock;
  log: Log;
  config: DepositConfig;
  /** Prices at block time; default: the price service's live VWAP and the 1-minute history. */
  prices?: DepositPrices;
  priceService?: PriceService;
  historical?: HistoricalService;
  /** The chain; default: the configured RPC client. */
  rpc?: SolanaRpc;
}

/** The watcher of the configuration, or null when it is off (no SOLANA_RPC_URL/DEPOSIT_ADDRESS). */
export async function watcherFromConfig(deps: DepositWiring): Promise<DepositWatcher | null> {
  const { config } = deps;
  if (config.watch === null) return null;
  const rpc = deps.rpc ?? (rpcFromConfig(config) as SolanaRpc);
  let prices = deps.prices;
  if (!prices) {
    if (!deps.priceService || !deps.historical) throw new Error('deposit prices need the price services');
    prices = serviceDepositPrices({
      prices: deps.priceService,
      historical: deps.historical,
      clock: deps.clock,
    });
  }
  return createDepositWatcher({
    db: deps.db,
    clock: deps.clock,
    log: deps.log,
    rpc,
    treasury: await treasuryOf(config.watch.depositAddress, config.usdcMint),
    prices,
    settings: config,
  });
}

/**
 * The worker's deposit task (one line in src/worker/worker.ts): none when the watcher is off; the
 * watcher is built on its first run (deriving the treasury's USDC account is asynchronous).
 */
export function depositTasks(deps: DepositWiring): PeriodicTask[] {
  if (deps.config.watch === null) return [];
  let watcher: Promise<DepositWatcher | null> | undefined;
  return [
    {
      name: 'deposits',
      intervalMs: deps.config.pollMs,
      async run(now, signal) {
        watcher ??= watcherFromConfig(deps);
        await (await watcher)?.task.run(now, signal);
      },
    },
  ];
}
