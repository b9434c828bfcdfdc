/** Prediction-market data (ingestion, the list and detail caches, lifecycle, demo data): the room's door. */
export { loadDemoMarkets } from './demo.js';
export { marketSource } from './market-source.js';
