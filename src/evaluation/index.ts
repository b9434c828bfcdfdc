/**
 * AI evaluation (docs/ai.md#evaluation): the resolver measured against labelled sets, and the
 * scorecard published from it — the room's door.
 */
export type { LabelledQuestion, LabelledSet, SetFormat } from './labelled-set.js';
export { readLabelledSet } from './read-set.js';
