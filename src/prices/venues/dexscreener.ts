import { type Clock, systemClock } from '../../lib/clock.js';
import type { PriceTarget } from '../tokens.js';
import { type PriceVenue, VenueError, type VenueQuote, type VenueSettings } from '../types.js';
import { isRecord, toNumber, venueGet } from './http.js';

interface KeptPair {
  price: number;
  liquidityUsd: number;
  volume24hUsd: number | null;
}

/**
 * Reads one pair when the token is its base on Solana; null for pairs that say nothing about the
 * token's price (the token is the quote, another chain, or no USD price).
 */
function readPair(pair: unknown, mint: string): KeptPair | null {
  if (!isRecord(pair)) throw new VenueError('dexscreener', 'bad_response', 'pair is not an object');
  if (pair.chainId !== 'solana') return null;
  if (!isRecord(pair.baseToken) || pair.baseToken.address !== mint) return null;
  // priceUsd is the base token's price, sent as a string.
  const price = toNumber(pair.priceUsd);
  if (price === null || price <= 0) return null;
  const liquidityUsd = isRecord(pair.liquidity) ? toNumber(pair.liquidity.usd) : null;
  const volume = isRecord(pair.volume) ? toNumber(pair.volume.h24) : null;
  return { price, liquidityUsd: liquidityUsd ?? 0, volume24hUsd: volume };
}

/**
 * DexScreener: every on-chain pool of a mint. The price comes from the deepest pool where the token
 * is the base; the volume is the sum over all those pools, since trading is spread across them.
 */
export function createDexScreenerVenue(settings: VenueSettings, clock: Clock = systemClock): PriceVenue {
  const baseUrl = settings.baseUrl.replace(/\/+$/, '');

  return {
    name: 'dexscreener',
    role: 'market',

    canPrice(target: PriceTarget): boolean {
      return target.mint !== null;
    },

    async fetchQuote(target: PriceTarget, signal: AbortSignal): Promise<VenueQuote | null> {
      const mint = target.mint;
      if (mint === null) return null;
      const response = await venueGet(`${baseUrl}/tokens/v1/solana/${encodeURIComponent(mint)}`, {
        venue: 'dexscreener',
        timeoutMs: settings.timeoutMs,
        signal,
        clock,
      });
      if (!Array.isArray(response.body)) {
        throw new VenueError('dexscreener', 'bad_response', 'body is not an array of pairs');
      }
      const kept = response.body.map((pair) => readPair(pair, mint)).filter((p) => p !== null);
      if (kept.length === 0) return null;
      let deepest = kept[0] as KeptPair;
      for (const pair of kept) if (pair.liquidityUsd > deepest.liquidityUsd) deepest = pair;
      const volumes = kept.map((p) => p.volume24hUsd).filter((v) => v !== null);
      return {
        price: deepest.price,
        volume24hUsd: volumes.length === 0 ? null : volumes.reduce((sum, v) => sum + v, 0),
        timestamp: null,
      };
    },
  };
}
