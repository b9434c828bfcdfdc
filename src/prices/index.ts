/** Venues, the sandbox feed, VWAP aggregation, single and batch prices: the room's door. */
export { median } from './aggregate.js';
export { presentPrice } from './batch.js';
export type { PriceConfig } from './config.js';
export { priceMessage } from './price-message.js';
export { createPriceService } from './price-service.js';
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
