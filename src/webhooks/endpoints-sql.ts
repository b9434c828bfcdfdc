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

/**
 * Endpoint health (docs/webhooks.md#endpoint-health), when a delivery to endpoint $1 failed for good
 * ($2 = now): its last success (DELIVERED or STOPPED) is when one last finished; the deliveries that
 * finished CALLBACK_FAILED after it are its failing streak, failing since the first of them was
 * created (not before that success). At least $3 of them, failing since $4 ms or more, disable it —
 * the endpoint locked first, so two failures at once disable it once. Only the deliveries created in
 * the last $4 ms + 30 days are read (webhook_deliveries_endpoint). Returns the endpoint when this
 * disabled it.
 */
export const DISABLE_IF_FAILING = statement(
  'webhook_endpoints_disable_if_failing',
  `WITH endpoint AS (
     SELECT id FROM webhook_endpoints WHERE id = $1 AND enabled FOR UPDATE
   ), recent AS (
     SELECT status, created_at, finished_at FROM webhook_deliveries
      WHERE endpoint_id = $1
        AND created_at >= $2::timestamptz - make_interval(secs => $4::double precision / 1000) - interval '30 days'
   ), success AS (
     SELECT max(finished_at) AS at FROM recent WHERE status IN ('DELIVERED', 'STOPPED')
   ), streak AS (
     SELECT count(*)::integer AS failed, greatest(min(r.created_at), max(s.at)) AS failing_since
       FROM recent r, success s
      WHERE r.status = 'CALLBACK_FAILED' AND (s.at IS NULL OR r.finished_at > s.at)
   )
   UPDATE webhook_endpoints e
      SET enabled = false, disabled_at = $2, updated_at = $2,
          disabled_reason = 'every delivery failed since '
            || to_char(t.failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
            || ' (' || t.failed || ' failed deliveries)'
     FROM endpoint, streak t
    WHERE e.id = endpoint.id AND t.failed >= $3
      AND t.failing_since <= $2::timestamptz - make_interval(secs => $4::double precision / 1000)
   RETURNING e.id, e.account_id, e.mode, e.url, e.disabled_reason, t.failing_since, t.failed`,
);
