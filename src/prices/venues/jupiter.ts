import { type Clock, systemClock } from '../../lib/clock.js';
import type { PriceTarget } from '../tokens.js';
import { type PriceVenue, VenueError, type VenueQuote, type VenueSettings } from '../types.js';
import { isRecord, toNumber, venueGet } from './http.js';

/**
 * Jupiter Price API v3: an aggregator's price by mint. It reports no volume and no wall-clock time
 * (only a slot), so it serves as a reference, not a market.
 */
export function createJupiterVenue(settings: VenueSettings, clock: Clock = systemClock): PriceVenue {
  // The configured base already ends in /price/v3 (e.g. https://api.jup.ag/price/v3).
  const baseUrl = settings.baseUrl.replace(/\/+$/, '');
  const headers: Record<string, string> = settings.apiKey ? { 'x-api-key': settings.apiKey } : {};

  return {
    name: 'jupiter',
    role: 'reference',

    canPrice(target: PriceTarget): boolean {
      return target.mint !== null;
    },

    async fetchQuote(target: PriceTarget, signal: AbortSignal): Promise<VenueQuote | null> {
      const mint = target.mint;
      if (mint === null) return null;
      const response = await venueGet(`${baseUrl}?ids=${encodeURIComponent(mint)}`, {
        venue: 'jupiter',
        timeoutMs: settings.timeoutMs,
        signal,
        headers,
        clock,
      });
      const body = response.body;
      if (!isRecord(body))
        throw new VenueError('jupiter', 'bad_response', 'body is not an object keyed by mint');
      // Tokens without a reliable price are left out of the answer (not sent as null).
      if (!Object.hasOwn(body, mint) || body[mint] === null) return null;
      const entry = body[mint];
      if (!isRecord(entry)) throw new VenueError('jupiter', 'bad_response', 'price entry is not an object');
      const price = toNumber(entry.usdPrice);
      if (price === null || price <= 0) {
        throw new VenueError('jupiter', 'bad_response', 'usdPrice is not a positive number');
      }
      return { price, volume24hUsd: null, timestamp: null };
    },
  };
}
