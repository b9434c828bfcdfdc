/**
 * Live data as server-sent events (docs/streams.md): price and market streams on the event-stream
 * mechanism (http/event-stream/), metered per minute on the ledger. Its door offers nothing: no other
 * room uses the streams; its descriptor is `feature.ts`.
 */
export {};
