/**
 * AI evaluation (docs/ai.md#evaluation): the resolver measured against labelled sets, and the
 * scorecard published from it. No other room uses it: its door is empty, and its descriptor
 * (`feature.ts`) offers `sibyl ai evaluate` and `GET /ai/scorecard`.
 */
export {};
