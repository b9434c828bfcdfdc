import type { Database } from '../../src/db/database.js';
import type { AiJobResolver } from '../../src/jobs/ports.js';

/** The callbacks the webhook outbox wrote (the test_recorded_callbacks view), oldest first. */
export async function callbacks(
  db: Database,
): Promise<
  { account_id: string; type: string; status: string; request_id: string; data: Record<string, unknown> }[]
> {
  return db.query(
    'SELECT account_id, type, status, request_id, data FROM test_recorded_callbacks ORDER BY created_at, id',
  );
}

/** An AI resolution whose every run ends in an unexpected error (a crashing provider client). */
export function crashingAi(resolver: AiJobResolver): AiJobResolver {
  return {
    ...resolver,
    resolve: async () => {
      throw new Error('provider client crashed');
    },
  };
}
