import { statement } from '../db/database.js';

/** Registered endpoints (docs/webhooks.md#endpoints): the rows of webhook_endpoints. */

const COLUMNS = `id, account_id, mode, url, event_types, description, enabled, secret_previous_until,
  disabled_at, disabled_reason, created_at, updated_at`;

/** Serialises an account's endpoint creations (the limit of 10 holds under concurrent requests). */
export const LOCK_ACCOUNT_ENDPOINTS = `SELECT pg_advisory_xact_lock(hashtextextended('webhook-endpoints:' || $1, 0))`;

export const COUNT = statement(
  'webhook_endpoints_count',
  'SELECT count(*)::integer AS n FROM webhook_endpoints WHERE account_id = $1',
);

export const INSERT = statement(
  'webhook_endpoints_insert',
  `INSERT INTO webhook_endpoints (id, account_id, mode, url, event_types, description, enabled, secret, created_at, updated_at)
   VALUES ($1, $2, $3, $4, $5, $6, true, $7, $8, $8)
   RETURNING ${COLUMNS}`,
);

export const LIST = statement(
  'webhook_endpoints_list',
  `SELECT ${COLUMNS} FROM webhook_endpoints WHERE account_id = $1 ORDER BY created_at, id`,
);

export const SELECT_ONE = statement(
  'webhook_endpoints_select_one',
  `SELECT ${COLUMNS} FROM webhook_endpoints WHERE id = $1 AND account_id = $2`,
);

/**
 * A change: each of url ($3), event_types ($4), description ($5, $6 = whether it is set) and
 * enabled ($7) when given. Enabling clears why it was disabled; disabling by its owner says so.
 */
export const UPDATE = statement(
  'webhook_endpoints_update',
  `UPDATE webhook_endpoints
      SET url = coalesce($3, url),
          event_types = coalesce($4, event_types),
          description = CASE WHEN $6 THEN $5 ELSE description END,
          enabled = coalesce($7, enabled),
          disabled_at = CASE WHEN $7 IS NULL THEN disabled_at WHEN $7 THEN NULL WHEN enabled THEN $8 ELSE disabled_at END,
          disabled_reason = CASE WHEN $7 IS NULL THEN disabled_reason WHEN $7 THEN NULL
                                 WHEN enabled THEN 'disabled by its owner' ELSE disabled_reason END,
          updated_at = $8
    WHERE id = $1 AND account_id = $2
   RETURNING ${COLUMNS}`,
);

/** Deletes an endpoint and cancels its deliveries still waiting ($3 = now). */
export const DELETE = statement(
  'webhook_endpoints_delete',
  `WITH deleted AS (
     DELETE FROM webhook_endpoints WHERE id = $1 AND account_id = $2 RETURNING id
   ), cancelled AS (
     UPDATE webhook_deliveries
        SET status = 'CANCELLED', due_at = NULL, finished_at = $3, cancelled_at = $3
      WHERE endpoint_id IN (SELECT id FROM deleted) AND status = 'PENDING'
     RETURNING 1
   )
   SELECT id, (SELECT count(*) FROM cancelled)::integer AS cancelled FROM deleted`,
);

/** Rotation: the current secret becomes the previous one, signing beside the new one until $4. */
export const ROTATE_SECRET = statement(
  'webhook_endpoints_rotate_secret',
  `UPDATE webhook_endpoints
      SET secret_previous = secret, secret_previous_until = $4, secret = $3, updated_at = $5
    WHERE id = $1 AND account_id = $2
   RETURNING id`,
);
