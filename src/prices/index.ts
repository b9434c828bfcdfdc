import type { Feature } from '../feature.js';
import type { Clock } from '../lib/clock.js';
import { type PriceConfig, priceSettings } from './config.js';
import { QuoteSource } from './quote-source.js';
import { createSandboxVenues } from './sandbox/venues.js';
import { PriceService } from './service.js';
import type { PriceVenue } from './types.js';

/** Venues, the sandbox feed, VWAP aggregation, single and batch prices: the room's door. */
export { median } from './aggregate.js';
export { presentPrice } from './batch.js';
export { invalidSymbol, readToken, requireToken, unknownSymbol } from './requested.js';
export { SANDBOX_TOKENS, sandboxMidPrice, sandboxQuote } from './sandbox/feed.js';
export { MAX_BATCH_SYMBOLS, SinglePriceResult, UnavailableSourceSchema } from './schemas.js';
export type { PriceService } from './service.js';
export { type PriceTarget, parseTarget } from './tokens.js';
export {
  CANDLE_INTERVALS,
  type Candle,
  type CandleInterval,
  type CandleVenue,
  INTERVAL_MS,
  LIVE_VENUES,
  type LiveVenueName,
  type PriceVenue,
  SANDBOX_VENUES,
  VenueError,
  type VenueFailure,
  type VenueName,
} from './types.js';
export { createLiveVenues } from './venues/registry.js';

/** Wires the price service: live venues for live accounts, the simulated ones for sandbox. */
export function createPriceService(p: PriceConfig, clock: Clock, liveVenues: PriceVenue[]): PriceService {
  const options = {
    ttlMs: p.cacheTtlMs,
    errorTtlMs: p.errorCacheTtlMs,
    breakerFailures: p.breakerFailures,
    breakerCooldownMs: p.breakerCooldownMs,
  };
  return new PriceService(
    {
      live: new QuoteSource(liveVenues, options, clock),
      sandbox: new QuoteSource(createSandboxVenues(clock), options, clock),
    },
    { maxAgeMs: p.maxAgeMs, outlierTolerance: p.outlierTolerance, minSources: p.minSources },
    clock,
  );
}

export const pricesFeature: Feature<{ prices: typeof priceSettings }> = {
  name: 'prices',
  settings: { prices: priceSettings },
  async api(app, { ports }) {
    const { priceRoutes } = await import('./routes.js');
    priceRoutes(app, { prices: ports.prices });
  },
};
