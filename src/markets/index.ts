/** Prediction-market data (ingestion, the list and detail caches, lifecycle, demo data): the room's door. */
export { loadDemoMarkets } from './demo/demo.js';
export { marketSource } from './ingest/market-source.js';
export type { MarketState } from './log/market-state.js';
export { MarketLogReader, type MarketLogRow } from './log/reader.js';
export { marketFacts } from './read/facts.js';
