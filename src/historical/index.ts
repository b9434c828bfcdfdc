/** Candle storage and historical series: the room's door. */
export { MAX_DATA_POINTS, MAX_RANGE_HOURS, resolveRange } from './buckets.js';
export { HistoricalService } from './service.js';
export { storedPriceAt } from './stored-price.js';
