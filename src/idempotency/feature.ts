/** `Idempotency-Key`'s descriptor (src/feature.ts): nothing to register (the edge and the ledger use its verbs), its pruned tables. */
import type { Feature } from '../feature.js';

export const idempotencyFeature: Feature = {
  name: 'idempotency',
  tables: ['idempotency_keys', 'idempotency_parts'],
  // Fixed by their own contract rather than settings: stored answers are replayed for 24 hours
  // (docs/api.md#idempotency), their shared parts until no answer can refer to them.
  async retention() {
    const [{ PARTS_RETENTION_MS, PRUNE_PARTS }, { RETENTION_MS }, { PRUNE }] = await Promise.all([
      import('./answer-parts.js'),
      import('./idempotency.js'),
      import('./sql.js'),
    ]);
    return [
      { name: 'idempotency_keys', prune: PRUNE, keepMs: () => RETENTION_MS },
      { name: 'idempotency_parts', prune: PRUNE_PARTS, keepMs: () => PARTS_RETENTION_MS },
    ];
  },
};
