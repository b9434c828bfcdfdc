import type { Database } from '../db/database.js';
import type { PeriodicTask } from '../worker/periodic.js';
import { PRUNE_PARTS, partsPruneBefore } from './answer-parts.js';
import { RETENTION_MS } from './idempotency.js';
import { PRUNE } from './sql.js';

/** Stored answers are kept 24 hours; their shared parts until no answer can refer to them. */
export function idempotencyTasks(deps: { db: Database }): PeriodicTask[] {
  return [
    {
      name: 'prune-idempotency-keys',
      intervalMs: 15 * 60 * 1000,
      run: async (now) => {
        await deps.db.query(PRUNE, [new Date(now.getTime() - RETENTION_MS)]);
        await deps.db.query(PRUNE_PARTS, [partsPruneBefore(now)]);
      },
    },
  ];
}
