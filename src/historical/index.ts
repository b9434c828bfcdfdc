/** Candle storage and historical series: the room's door. */
export { resolveRange } from './buckets.js';
export { HistoricalService } from './service.js';
