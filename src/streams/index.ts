/**
 * Live data as server-sent events (docs/streams.md): price and market streams on the event-stream
 * mechanism (http/event-stream/), metered per minute on the ledger: the room's door. Its descriptor
 * is `feature.ts`.
 */
export { type MarketChanges, recordMarketChanges, type StreamedTrade } from './market-log.js';
