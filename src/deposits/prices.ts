import { type HistoricalService, resolveRange } from '../historical/index.js';
import type { Clock } from '../lib/clock.js';
import { type PriceService, requireToken } from '../prices/index.js';

/**
 * The prices a deposit is valued at (docs/deposits.md#value): USD per token at a transaction's block time.
 * Null when there is none (the deposit is then held for the operator, never guessed).
 */
export interface DepositPrices {
  at(asset: 'SOL' | 'USDC', blockTime: Date | null): Promise<number | null>;
}

/** Block times this recent are priced at the live VWAP; older ones from the 1-minute history. */
export const LIVE_WINDOW_MS = 120_000;

/**
 * The production prices: the live VWAP of the price service when the block time is recent (or
 * unknown), else the combined 1-minute candle of that minute from the historical service. A venue
 * failure is a missing price, not an error: the deposit is held rather than the poll failing.
 */
export function serviceDepositPrices(deps: {
  prices: PriceService;
  historical: HistoricalService;
  clock: Clock;
}): DepositPrices {
  return {
    async at(asset, blockTime) {
      const { target } = requireToken(asset, 'asset');
      const now = deps.clock.now();
      try {
        if (blockTime === null || now.getTime() - blockTime.getTime() <= LIVE_WINDOW_MS) {
          const live = await deps.prices.price(target, 'live', asset);
          return live.isValid ? live.vwapPrice : null;
        }
        const start = new Date(Math.floor(blockTime.getTime() / 60_000) * 60_000);
        const range = resolveRange(start, new Date(start.getTime() + 60_000), '1m', now);
        const series = await deps.historical.series({ target, requested: asset, range, mode: 'live' });
        return series.dataPoints[0]?.price ?? null;
      } catch {
        return null;
      }
    },
  };
}

/** Fixed prices (tests, the bench): the same USD per token whatever the time. */
export function fixedDepositPrices(prices: { SOL: number | null; USDC: number | null }): DepositPrices {
  return { at: async (asset) => prices[asset] };
}
