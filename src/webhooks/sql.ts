import { statement } from '../db/database.js';
import { pruneStatement } from '../db/prune.js';
import { notifyExpression, wakingWrite } from '../queue/wake.js';

/** The NOTIFY channel of webhook deliveries: the transaction that writes one wakes the workers. */
export const DELIVERIES_CHANNEL = 'webhook_deliveries';

/**
 * The NOTIFY channel of webhook events, payload the account id: every statement that creates a
 * delivery (a callback, a test event) sends it, so the account's open streams read it at once
 * (GET /webhooks/stream). Apart from the workers' channel: a test event is no work for them, and a
 * redelivery (work, not a new event) wakes no stream.
 */
export const EVENTS_CHANNEL = 'webhook_events';

const COLUMNS = `id, account_id, url, type, request_id, payload, status, due_at, attempts, max_attempts,
  last_status_code, last_error, created_at, finished_at, cancelled_at`;

// The row, the workers' wake-up and the account's streams' in one statement (queue/wake.ts).
export const INSERT = statement(
  'webhooks_insert',
  wakingWrite(
    [DELIVERIES_CHANNEL, { channel: EVENTS_CHANNEL, payload: 'account_id' }],
    `INSERT INTO webhook_deliveries (id, account_id, url, type, request_id, payload, status, due_at, max_attempts, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, 'PENDING', $7, $8, $7)`,
    'id',
  ),
);

/** The error of an attempt whose worker was lost: its outcome is unknown, and it counts as failed. */
export const ABANDONED_ERROR =
  'abandoned: the worker making this attempt stopped (or hung past its lease) before recording an answer';

/**
 * Claims due deliveries, and settles the attempts whose worker was lost.
 *
 * Every claim counts an attempt (`attempts + 1`) before anything is sent: a delivery whose attempt
 * kills its worker cannot be sent forever. A SENDING row whose lease lapsed ($1 past `due_at`) had
 * its attempt counted when it was claimed; its outcome is unknown, so it is a failed attempt like
 * any other: recorded among the attempts with the error `abandoned`, and the next one is due on the
 * retry schedule ($5, the delays in ms, indexed by the attempt that failed) — or, past the last
 * attempt, the delivery is CALLBACK_FAILED and never sent again (CANCELLED, if cancelled meanwhile). Those rows are not sent by this
 * claim; only PENDING rows whose attempt is due are, leased until $1 + $4 ms under the token $3, each
 * returned with its account's signing secrets.
 *
 * The three parts touch different rows (SENDING ones, PENDING ones), so one statement can do all of
 * them; PostgreSQL runs the data-modifying CTEs whether or not the final UPDATE reads them.
 */
/**
 * The secrets a delivery is signed with: its endpoint's (an account event), else its account's (a
 * callback); `secret_owner` is what they were sealed for (docs/webhooks.md#secrets-at-rest). A
 * deleted endpoint's delivery has none. `e` is the endpoint joined once per claimed row (null for a
 * callback or a deleted endpoint), `a` the account's secrets.
 */
const ENDPOINT_SECRETS = `CASE WHEN d.endpoint_id IS NULL THEN a.webhook_secret ELSE e.secret END AS webhook_secret,
             CASE WHEN d.endpoint_id IS NULL THEN a.webhook_secret_previous ELSE e.secret_previous END
               AS webhook_secret_previous,
             CASE WHEN d.endpoint_id IS NULL THEN a.webhook_secret_previous_until ELSE e.secret_previous_until END
               AS webhook_secret_previous_until,
             coalesce(d.endpoint_id, d.account_id) AS secret_owner`;

export const CLAIM = statement(
  'webhooks_claim',
  `WITH lapsed AS (
     SELECT id, attempts, max_attempts, attempt_started_at, cancelled_at FROM webhook_deliveries
      WHERE status = 'SENDING' AND due_at <= $1
      ORDER BY due_at LIMIT $2 FOR UPDATE SKIP LOCKED
   ), settled AS (
     UPDATE webhook_deliveries d
        SET status = CASE WHEN l.cancelled_at IS NOT NULL THEN 'CANCELLED'
                          WHEN l.attempts >= l.max_attempts THEN 'CALLBACK_FAILED' ELSE 'PENDING' END,
            due_at = CASE WHEN l.cancelled_at IS NOT NULL OR l.attempts >= l.max_attempts THEN NULL
                          ELSE $1::timestamptz + make_interval(secs =>
                                 ($5::bigint[])[least(greatest(l.attempts, 1), cardinality($5::bigint[]))]::double precision / 1000)
                     END,
            finished_at = CASE WHEN l.cancelled_at IS NOT NULL OR l.attempts >= l.max_attempts THEN $1::timestamptz END,
            lease_token = NULL, last_status_code = NULL, last_error = '${ABANDONED_ERROR}'
       FROM lapsed l
      WHERE d.id = l.id
   ), lost_attempts AS (
     INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, status_code, error, latency_ms)
     SELECT id, attempts, coalesce(attempt_started_at, $1), NULL, '${ABANDONED_ERROR}',
            greatest(0, floor(extract(epoch FROM $1::timestamptz - coalesce(attempt_started_at, $1)) * 1000))::integer
       FROM lapsed
     ON CONFLICT (delivery_id, attempt) DO NOTHING
   ), due AS (
     SELECT id, account_id, endpoint_id FROM webhook_deliveries
      WHERE status = 'PENDING' AND due_at <= $1
      ORDER BY due_at LIMIT $2 FOR UPDATE SKIP LOCKED
   )
   UPDATE webhook_deliveries d
      SET status = 'SENDING', attempts = d.attempts + 1, attempt_started_at = $1, lease_token = $3,
          due_at = $1::timestamptz + make_interval(secs => $4::double precision / 1000)
     FROM due
          JOIN webhook_secrets a ON a.account_id = due.account_id
          LEFT JOIN webhook_endpoints e ON e.id = due.endpoint_id
    WHERE d.id = due.id
   RETURNING d.id, d.account_id, d.url, d.type, d.request_id, d.payload, d.attempts, d.max_attempts, d.lease_token,
             d.endpoint_id, ${ENDPOINT_SECRETS}`,
);

export const NEXT_DUE = statement(
  'webhooks_next_due',
  `SELECT min(due_at) AS next FROM webhook_deliveries WHERE status IN ('PENDING', 'SENDING')`,
);

/**
 * Records attempts' outcomes, many in one statement (docs/webhooks.md#operating), each only for the
 * worker that still holds its lease: the new status, the next attempt's time (PENDING) or none
 * (final), and the attempt itself (counted when claimed). $1 is a JSON array, one object an attempt:
 * `{ item, id, lease_token, status, due_at (null: final), status_code, error, finished_at (when the
 * outcome came back), attempted_at, latency_ms }` — one text parameter, where nine arrays cost the
 * worker more to serialise than the rest of the statement. A delivery cancelled while its attempt was
 * in flight ends CANCELLED, unless the attempt delivered it or the receiver stopped it: no further
 * attempt is made. Returns the `item` of each attempt recorded; one missing lost its lease (the same
 * delivery may come twice, under two leases, when a lapsed one was claimed again by this worker). It
 * reads the SENDING rows (few: those in flight) or the primary key, as the planner prefers: 0.7 ms
 * for 12 attempts among 3,000 due (EXPLAIN ANALYZE, PostgreSQL).
 */
export const FINISH_ATTEMPTS = statement(
  'webhooks_finish_attempts',
  `WITH outcome AS (
     SELECT * FROM json_to_recordset($1::json)
       AS o(item integer, id text, lease_token text, status text, due_at timestamptz, status_code integer,
            error text, finished_at timestamptz, attempted_at timestamptz, latency_ms integer)
   ), updated AS (
     UPDATE webhook_deliveries d
        SET status = CASE WHEN d.cancelled_at IS NOT NULL AND o.status IN ('PENDING', 'CALLBACK_FAILED')
                          THEN 'CANCELLED' ELSE o.status END,
            due_at = CASE WHEN d.cancelled_at IS NOT NULL THEN NULL ELSE o.due_at END,
            lease_token = NULL, last_status_code = o.status_code, last_error = o.error,
            finished_at = CASE WHEN o.due_at IS NULL OR d.cancelled_at IS NOT NULL THEN o.finished_at END
       FROM outcome o
      WHERE d.id = o.id AND d.lease_token = o.lease_token AND d.status = 'SENDING'
     RETURNING d.id, d.attempts, o.attempted_at, o.status_code, o.error, o.latency_ms, o.item
   ), attempts AS (
     INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, status_code, error, latency_ms)
     SELECT id, attempts, attempted_at, status_code, error, latency_ms FROM updated
   )
   SELECT item FROM updated`,
);

export const SELECT_ONE = statement(
  'webhooks_select_one',
  `SELECT ${COLUMNS} FROM webhook_deliveries WHERE id = $1 AND ($2::text IS NULL OR account_id = $2)`,
);

export const SELECT_ATTEMPTS = statement(
  'webhooks_select_attempts',
  `SELECT attempt, attempted_at, status_code, error, latency_ms
     FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempt`,
);

export const LIST = statement(
  'webhooks_list',
  `SELECT ${COLUMNS} FROM webhook_deliveries
    WHERE ($1::text IS NULL OR account_id = $1) AND ($2::text IS NULL OR status = $2)
    ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`,
);

export const COUNT = statement(
  'webhooks_count',
  `SELECT count(*) AS total FROM webhook_deliveries
    WHERE ($1::text IS NULL OR account_id = $1) AND ($2::text IS NULL OR status = $2)`,
);

/**
 * Redelivery: one more attempt, due now. A delivery still retrying keeps its schedule and is only
 * brought forward; a finished one (a cancelled one too) gets exactly one new attempt ($3 = now).
 * Asking for a redelivery withdraws a cancellation.
 */
export const REDELIVER = statement(
  'webhooks_redeliver',
  wakingWrite(
    DELIVERIES_CHANNEL,
    `UPDATE webhook_deliveries
        SET status = CASE WHEN status = 'SENDING' THEN status ELSE 'PENDING' END,
            due_at = CASE WHEN status = 'SENDING' THEN due_at ELSE $3 END,
            max_attempts = CASE WHEN status IN ('PENDING', 'SENDING') THEN max_attempts ELSE attempts + 1 END,
            finished_at = CASE WHEN status IN ('PENDING', 'SENDING') THEN finished_at END,
            cancelled_at = NULL
      WHERE id = $1 AND ($2::text IS NULL OR account_id = $2)`,
    'id',
  ),
);

/**
 * Cancellation ($3 = now): a PENDING delivery becomes CANCELLED, final, at once; a SENDING one (an
 * attempt in flight, which cannot be called back) is marked, and that attempt's outcome ends it
 * (FINISH_ATTEMPTS, or CLAIM should its worker be lost). The row is locked first: a claim that took it
 * meanwhile is waited for and its SENDING seen, and a claim after this finds it no longer PENDING.
 * Answers the status the delivery had; no row: unknown to this account.
 */
export const CANCEL = statement(
  'webhooks_cancel',
  `WITH target AS (
     SELECT id, status FROM webhook_deliveries
      WHERE id = $1 AND ($2::text IS NULL OR account_id = $2)
      FOR UPDATE
   ), updated AS (
     UPDATE webhook_deliveries d
        SET status = CASE WHEN t.status = 'PENDING' THEN 'CANCELLED' ELSE d.status END,
            due_at = CASE WHEN t.status = 'PENDING' THEN NULL ELSE d.due_at END,
            finished_at = CASE WHEN t.status = 'PENDING' THEN $3::timestamptz ELSE d.finished_at END,
            cancelled_at = coalesce(d.cancelled_at, $3::timestamptz)
       FROM target t
      WHERE d.id = t.id AND t.status IN ('PENDING', 'SENDING')
     RETURNING d.id
   )
   SELECT t.status AS previous, EXISTS (SELECT 1 FROM updated) AS cancelled FROM target t`,
);

/**
 * The webhook stream (GET /webhooks/stream): an account's deliveries created since $2, oldest first,
 * with its signing secrets. Reads the range of webhook_deliveries_account.
 */
/** Where a stream resumed with `Last-Event-ID` starts: that event, if it is the account's and recent. */
export const STREAM_RESUME_POINT = statement(
  'webhooks_stream_resume_point',
  'SELECT created_at FROM webhook_deliveries WHERE id = $1 AND account_id = $2 AND created_at >= $3',
);

export const STREAM_EVENTS = statement(
  'webhooks_stream_events',
  `SELECT d.id, d.account_id, d.payload, d.created_at,
          a.webhook_secret, a.webhook_secret_previous, a.webhook_secret_previous_until
     FROM webhook_deliveries d JOIN webhook_secrets a ON a.account_id = d.account_id
    WHERE d.account_id = $1 AND (d.created_at, d.id) > ($2::timestamptz, $3::text)
    ORDER BY d.created_at, d.id LIMIT $4`,
);

export const SELECT_SECRETS = statement(
  'webhooks_select_secrets',
  `SELECT webhook_secret, webhook_secret_previous, webhook_secret_previous_until FROM webhook_secrets
    WHERE account_id = $1`,
);

/** A new account's signing secret (sealed), written in the transaction that creates the account. */
export const INSERT_SECRET = 'INSERT INTO webhook_secrets (account_id, webhook_secret) VALUES ($1, $2)';

/** Rotation: the current secret becomes the previous one, signing beside the new one until $3. */
export const ROTATE_SECRET = statement(
  'webhooks_rotate_secret',
  `UPDATE webhook_secrets
      SET webhook_secret_previous = webhook_secret, webhook_secret_previous_until = $3, webhook_secret = $2
    WHERE account_id = $1
   RETURNING account_id`,
);

/**
 * A test event: a one-attempt delivery inserted already leased (SENDING, its one attempt counted) by
 * the request that sends it, returning the account's secrets. Should that process die mid-attempt,
 * a worker finds the lease lapsed and ends the delivery CALLBACK_FAILED `abandoned`. It wakes the
 * account's streams (an event like any other), not the workers (nothing for them to claim).
 */
export const INSERT_TEST = statement(
  'webhooks_insert_test',
  `WITH inserted AS (
     INSERT INTO webhook_deliveries (id, account_id, url, type, request_id, payload, status, due_at, lease_token,
                                     attempts, max_attempts, attempt_started_at, created_at)
     VALUES ($1, $2, $3, 'test', $4, $5, 'SENDING', $7, $8, 1, 1, $6, $6)
     RETURNING account_id
   )
   SELECT a.webhook_secret, a.webhook_secret_previous, a.webhook_secret_previous_until,
          ${notifyExpression(EVENTS_CHANNEL, 'i.account_id')} AS woke
     FROM webhook_secrets a JOIN inserted i ON i.account_id = a.account_id`,
);

/**
 * Retention (docs/operations.md#retention): deletes up to $2 finished deliveries that finished before
 * $1, with their attempts, in one statement (`pruneStatement`, db/prune.ts); returns how many
 * deliveries went. Each reads the range of its partial index (migration 0020), oldest first.
 */
function pruneDeliveries(name: string, typeCondition: string) {
  return pruneStatement({
    name,
    table: 'webhook_deliveries',
    key: 'id',
    ended: `status IN ('DELIVERED', 'STOPPED', 'CALLBACK_FAILED', 'CANCELLED') AND ${typeCondition} AND finished_at < $1`,
    orderBy: 'finished_at',
    dependents: [{ table: 'webhook_attempts', column: 'delivery_id' }],
  });
}

/** Callbacks of results (`ai`, `price`): kept RETENTION_WEBHOOK_DELIVERIES_DAYS. */
export const PRUNE_DELIVERIES = pruneDeliveries('webhooks_prune', "type <> 'test'");
/** Test events of POST /webhooks/test: kept RETENTION_TEST_DELIVERIES_HOURS. */
export const PRUNE_TEST_DELIVERIES = pruneDeliveries('webhooks_prune_test', "type = 'test'");

/**
 * An endpoint's deliveries, newest first (GET /webhooks/endpoints/:id/deliveries): filtered by
 * status ($2), event type ($3), created at or after $4, and after the cursor's position ($5, $6);
 * $7 rows. Reads the range of webhook_deliveries_endpoint. `created_text` is the cursor's key: the
 * creation time to the microsecond, as src/http/cursor.ts reads a timestamp key.
 */
export const ENDPOINT_DELIVERIES = statement(
  'webhooks_endpoint_deliveries',
  `SELECT ${COLUMNS}, event_id,
          to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_text
     FROM webhook_deliveries
    WHERE endpoint_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR type = $3)
      AND ($4::timestamptz IS NULL OR created_at >= $4)
      AND ($5::timestamptz IS NULL OR (created_at, id) < ($5::timestamptz, $6::text))
    ORDER BY created_at DESC, id DESC LIMIT $7`,
);

export const ATTEMPTS_OF = statement(
  'webhooks_attempts_of',
  `SELECT delivery_id, attempt, attempted_at, status_code, error, latency_ms
     FROM webhook_attempts WHERE delivery_id = ANY($1::text[]) ORDER BY delivery_id, attempt`,
);

/**
 * Recovery (POST /webhooks/endpoints/:id/recover): every failed delivery of endpoint $1 created at
 * or after $2 gets one more attempt, due now ($3), as a redelivery does; one row each.
 */
export const RECOVER = statement(
  'webhooks_recover',
  wakingWrite(
    DELIVERIES_CHANNEL,
    `UPDATE webhook_deliveries
        SET status = 'PENDING', due_at = $3, max_attempts = attempts + 1, finished_at = NULL, cancelled_at = NULL
      WHERE endpoint_id = $1 AND status = 'CALLBACK_FAILED' AND created_at >= $2`,
    'id',
  ),
);
