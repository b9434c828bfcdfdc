/** `Idempotency-Key`'s descriptor (src/feature.ts): nothing to register (the edge and the ledger use its verbs), its pruned tables. */
import type { Feature } from '../feature.js';
import { PARTS_RETENTION_MS, PRUNE_PARTS } from './answer-parts.js';
import { RETENTION_MS } from './idempotency.js';
import { PRUNE } from './sql.js';

export const idempotencyFeature: Feature = {
  name: 'idempotency',
  // Fixed by their own contract rather than settings: stored answers are replayed for 24 hours
  // (docs/api.md#idempotency), their shared parts until no answer can refer to them.
  retention: [
    { name: 'idempotency_keys', prune: PRUNE, keepMs: () => RETENTION_MS },
    { name: 'idempotency_parts', prune: PRUNE_PARTS, keepMs: () => PARTS_RETENTION_MS },
  ],
};
