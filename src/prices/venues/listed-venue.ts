import type { PriceTarget, TokenMarkets } from '../tokens.js';
import type { Candle, CandleInterval, CandleVenue, PriceVenue, VenueQuote } from '../types.js';

/** The exchanges that list tokens under their own market name (docs/prices.md#venues). */
export type ListingVenueName = 'binance' | 'coinbase' | 'kraken' | 'okx';

/** What differs between the exchanges: their market name goes in, their answer comes out. */
export interface ListingParts {
  readonly name: ListingVenueName & keyof TokenMarkets;
  /** Whether the exchange has a bucket size for the interval. */
  serves(interval: CandleInterval): boolean;
  /** The quote for the exchange's market name, or null when the exchange does not list it. */
  quote(market: string, signal: AbortSignal): Promise<VenueQuote | null>;
  /** Candles opening in [startMs, endMs), oldest first; null when the market is not listed. */
  candles(
    market: string,
    interval: CandleInterval,
    startMs: number,
    endMs: number,
    signal: AbortSignal,
  ): Promise<Candle[] | null>;
}

/**
 * A market venue that prices a token by its listing on one exchange: a token the exchange does
 * not list (no market name in the token table) is neither asked nor priced.
 */
export function listedVenue(parts: ListingParts): PriceVenue & CandleVenue {
  const market = (target: PriceTarget): string | undefined => target.token?.markets[parts.name];
  return {
    name: parts.name,
    role: 'market',
    canPrice: (target) => market(target) !== undefined,
    async fetchQuote(target, signal) {
      const name = market(target);
      return name === undefined ? null : parts.quote(name, signal);
    },
    canServeCandles: (target, interval) => market(target) !== undefined && parts.serves(interval),
    async fetchCandles(target, interval, start, end, signal) {
      const name = market(target);
      if (name === undefined || !parts.serves(interval)) return null;
      return parts.candles(name, interval, start.getTime(), end.getTime(), signal);
    },
  };
}
