import type { Queryable } from '../../src/db/database.js';

/**
 * The callbacks the webhook outbox wrote, as rows a test can compare: a view over
 * webhook_deliveries with each payload's `status` and `data` (no unique index: a callback written
 * twice shows up as two rows).
 */
export const CALLBACKS_VIEW = `
  CREATE OR REPLACE VIEW test_recorded_callbacks AS
  SELECT id, account_id, url, type, (payload::jsonb)->>'status' AS status, request_id,
         (payload::jsonb)->'data' AS data, created_at
    FROM webhook_deliveries`;

export async function createCallbacksView(db: Queryable): Promise<void> {
  await db.exec(CALLBACKS_VIEW);
}
