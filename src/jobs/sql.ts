import { statement } from '../db/database.js';
import { pruneStatement } from '../db/prune.js';
import { wakingWrite } from '../queue/wake.js';

/** The NOTIFY channel that wakes the job workers. */
export const JOBS_CHANNEL = 'scheduled_jobs';

const COLUMNS = `id, account_id, job_type, status, scheduled_for, request, callback_url, mode, charge_entry_id,
  cost_micros, request_id, key_id, result, error, delivery_id, attempts, lease_token, created_at, started_at, finished_at`;

/**
 * The jobs of a batch of charges (the coalescing biller, docs/jobs.md#how-scheduling-commits), in
 * the transaction of their charges: one row per element of the arrays ($1–$12, the columns of
 * scheduled_jobs named below), and the workers' wake-up (queue/wake.ts), once for the transaction:
 * PostgreSQL folds the identical notifications.
 */
export const INSERT_MANY = statement(
  'jobs_insert_many',
  wakingWrite(
    JOBS_CHANNEL,
    `INSERT INTO scheduled_jobs (id, account_id, job_type, status, scheduled_for, request, callback_url, mode,
       charge_entry_id, cost_micros, request_id, key_id, created_at)
     SELECT t.id, t.account_id, t.job_type, 'PENDING', t.scheduled_for, t.request::jsonb, t.callback_url, t.mode,
            t.charge_entry_id, t.cost_micros, t.request_id, t.key_id, t.created_at
       FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::text[], $6::text[], $7::text[],
                   $8::bigint[], $9::bigint[], $10::text[], $11::text[], $12::timestamptz[])
            AS t(id, account_id, job_type, scheduled_for, request, callback_url, mode, charge_entry_id,
                 cost_micros, request_id, key_id, created_at)`,
    'id',
  ),
);

export const FIND = statement(
  'jobs_find',
  `SELECT ${COLUMNS} FROM scheduled_jobs WHERE id = $1 AND account_id = $2 AND job_type = $3`,
);

export const FIND_ANY = `SELECT ${COLUMNS} FROM scheduled_jobs WHERE id = $1`;

export const LIST = statement(
  'jobs_list',
  `SELECT ${COLUMNS} FROM scheduled_jobs
    WHERE account_id = $1 AND job_type = $2 AND ($3::text IS NULL OR status = $3)
    ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5`,
);

export const COUNT = statement(
  'jobs_count',
  `SELECT count(*) AS total FROM scheduled_jobs
    WHERE account_id = $1 AND job_type = $2 AND ($3::text IS NULL OR status = $3)`,
);

/**
 * Cancels a PENDING job at least five minutes before it is due ($4 = now + 5 minutes). The row lock
 * it takes is the one a claiming worker takes: a cancel and a claim racing for one job serialise,
 * and whichever comes second finds the status changed.
 */
export const CANCEL = statement(
  'jobs_cancel',
  `UPDATE scheduled_jobs SET status = 'CANCELLED', finished_at = $5
    WHERE id = $1 AND account_id = $2 AND job_type = $3 AND status = 'PENDING' AND scheduled_for >= $4
   RETURNING ${COLUMNS}`,
);

/**
 * Claims jobs (docs/jobs.md#claims), each kind with its own limit: AI resolutions due at $1, up to
 * $2; price checks due by $7 (a moment ahead of $1, or $1), up to $6. A price check claimed ahead of
 * its time is not started: its attempt is not counted and `started_at` stays NULL until the worker
 * starts it at its time (START); its lease runs from its time, so it covers the wait.
 *
 * First, and one at a time, a PROCESSING job whose lease lapsed after it started (its worker died,
 * or its run failed): it runs alone (runner.ts `runsAlone`). Should its own work have killed its
 * worker, the jobs claimed beside it then died too, each with an attempt spent; claimed one at a
 * time and run alone, each spends its next attempt on its own run only, so only the poison one ends
 * FAILED (docs/operations.md#bounded-work). The oldest lapsed lease first: a job that kills every
 * worker gets a fresh lease each time and goes to the back. A price check whose lease lapsed before
 * it ever started (claimed ahead by a worker that died first) never ran: it is taken back with the
 * due ones, in bulk. The lease is the job type's ($4 for price checks, $5 for AI resolutions, in ms).
 */
export const CLAIM = statement(
  'jobs_claim',
  `WITH returned AS (
     SELECT id FROM scheduled_jobs
      WHERE status = 'PROCESSING' AND lease_until <= $1 AND started_at IS NOT NULL
      ORDER BY lease_until LIMIT 1 FOR UPDATE SKIP LOCKED
   ), unstarted AS (
     SELECT id FROM scheduled_jobs
      WHERE status = 'PROCESSING' AND lease_until <= $1 AND started_at IS NULL AND NOT EXISTS (SELECT FROM returned)
      ORDER BY lease_until LIMIT $6 FOR UPDATE SKIP LOCKED
   ), ai AS (
     SELECT id FROM scheduled_jobs
      WHERE status = 'PENDING' AND job_type = 'AI_RESOLUTION' AND scheduled_for <= $1 AND NOT EXISTS (SELECT FROM returned)
      ORDER BY scheduled_for LIMIT $2 FOR UPDATE SKIP LOCKED
   ), price AS (
     SELECT id FROM scheduled_jobs
      WHERE status = 'PENDING' AND job_type = 'PRICE_RESOLUTION' AND scheduled_for <= $7 AND NOT EXISTS (SELECT FROM returned)
      ORDER BY scheduled_for LIMIT greatest($6 - (SELECT count(*) FROM unstarted), 0) FOR UPDATE SKIP LOCKED
   )
   UPDATE scheduled_jobs j
      SET status = 'PROCESSING', lease_token = $3,
          attempts = j.attempts + (CASE WHEN j.scheduled_for <= $1 THEN 1 ELSE 0 END),
          lease_until = greatest($1::timestamptz, j.scheduled_for) + make_interval(secs => (CASE j.job_type WHEN 'AI_RESOLUTION' THEN $5 ELSE $4 END)::double precision / 1000),
          started_at = CASE WHEN j.scheduled_for <= $1 THEN coalesce(j.started_at, $1) ELSE j.started_at END
    WHERE j.id IN (SELECT id FROM returned UNION ALL SELECT id FROM unstarted UNION ALL SELECT id FROM ai UNION ALL SELECT id FROM price)
   RETURNING ${COLUMNS}`,
);

/**
 * The next time a claim would find a job: an AI resolution's time (when $1), a price check's time
 * less $2 ms (when $2 is not null: how far ahead they are claimed), or a lease's end.
 */
export const NEXT_DUE = statement(
  'jobs_next_due',
  `SELECT least(
     CASE WHEN $1::boolean THEN
       (SELECT min(scheduled_for) FROM scheduled_jobs WHERE status = 'PENDING' AND job_type = 'AI_RESOLUTION') END,
     (SELECT min(scheduled_for) FROM scheduled_jobs WHERE status = 'PENDING' AND job_type = 'PRICE_RESOLUTION')
       - make_interval(secs => $2::double precision / 1000),
     (SELECT min(lease_until) FROM scheduled_jobs WHERE status = 'PROCESSING')) AS next`,
);

/**
 * The statements that act on the jobs a worker holds — START, FINISH, GIVE_BACK_ATTEMPT, LOCK_HELD —
 * take them as one JSON object keyed by job id (`{ "<id>": "<lease token>" }`, or for FINISH
 * `{ "<id>": { lease_token, status, … } }`) and join nothing: the rows come by primary key
 * (`id = ANY` of the object's keys) and each row reads its own entry (`$1 -> id`, a binary search
 * of the object's keys). A join with `jsonb_to_recordset` was planned, with the statistics of a
 * table whose jobs had all just been claimed, as a nested loop that read the whole JSON once per
 * leased job: 5.4 s for one START of 1,000 among 10,000 leased (EXPLAIN ANALYZE), where this shape
 * takes 50 ms. They name no status either: a lease token is only ever held by a PROCESSING job
 * (CLAIM sets it, and FINISH and RELEASE, which end PROCESSING, clear it), and naming the status
 * lets the planner read every leased job through scheduled_jobs_leased instead of the primary key.
 */
const HELD = `j.id = ANY (ARRAY(SELECT jsonb_object_keys($1::jsonb)))`;

/**
 * Finishes the jobs of $1 (`{ "<id>": { lease_token, status, result?, error?, delivery_id? } }`)
 * that still hold their lease; the ids it returns are the jobs this call finished. A claimed batch
 * is finished by one statement (one commit) instead of one per job: per-job commits were most of
 * the time 1,000 jobs due in one second took to run (docs/performance.md).
 */
export const FINISH = statement(
  'jobs_finish',
  `UPDATE scheduled_jobs j
      SET status = $1::jsonb -> j.id ->> 'status', result = $1::jsonb -> j.id -> 'result',
          error = $1::jsonb -> j.id -> 'error', finished_at = $2,
          delivery_id = coalesce($1::jsonb -> j.id ->> 'delivery_id', j.delivery_id),
          lease_until = NULL, lease_token = NULL
    WHERE ${HELD} AND j.lease_token = $1::jsonb -> j.id ->> 'lease_token'
   RETURNING j.id`,
);

/**
 * Completes the jobs of $1 (`{ "<id>": { t: <lease token>, e: <event id>, r: <result, JSON text> } }`)
 * that still hold their lease, and records each one's `job.completed` (id `e`, at $2) with its
 * deliveries, in one statement (one commit): a finishing batch with no refund and no callback, the
 * usual one (docs/jobs.md#claims). `events` are the webhooks room's CTEs (`eventsOf`), given the
 * event's data as the delivery carries it — `{ jobId, type, requestId, result }`, the result as the
 * worker wrote it — built only for an event an endpoint takes; the event's row keeps the job's id,
 * type and request id, not its result a second time (docs/webhooks.md#account-events). Returns the
 * ids of the jobs it completed. It replaces FINISH then the events' own statement, whose 1,000
 * payloads the worker built and sent whether or not any endpoint was there.
 */
export function finishCompleted(eventsOf: (payloadData: string) => { ctes: string; woken: string }) {
  const events = eventsOf(
    `'{"jobId":' || to_json(t.job_id)::text || ',"type":"' || t.kind || '","requestId":' ||
       to_json(t.request_id)::text || ',"result":' || t.result || '}'`,
  );
  return statement(
    'jobs_finish_completed',
    `WITH finished AS (
       UPDATE scheduled_jobs j
          SET status = 'COMPLETED', result = ($1::jsonb -> j.id ->> 'r')::jsonb, error = NULL, finished_at = $2,
              lease_until = NULL, lease_token = NULL
        WHERE ${HELD} AND j.lease_token = $1::jsonb -> j.id ->> 't'
       RETURNING j.id, j.account_id, j.mode, j.job_type, j.request_id
     ), told AS (
       SELECT $1::jsonb -> f.id ->> 'e' AS id, f.account_id, f.mode, 'job.completed' AS type,
              jsonb_build_object('jobId', f.id, 'type', k.kind, 'requestId', f.request_id) AS data,
              $2::timestamptz AS created_at, f.id AS job_id, k.kind, f.request_id, $1::jsonb -> f.id ->> 'r' AS result
         FROM finished f,
              LATERAL (SELECT CASE f.job_type WHEN 'AI_RESOLUTION' THEN 'ai' ELSE 'price' END AS kind) k
     )${events.ctes}
     SELECT f.id, ${events.woken} AS woke FROM finished f`,
  );
}

/**
 * Gives back the attempt of the jobs of $1 (`{ "<id>": "<lease token>" }`) still leased: a worker
 * that cannot sign (a rotation retired its attestation key) leaves them to come back after their
 * lease, to a worker that can, without spending one of their runs.
 */
export const GIVE_BACK_ATTEMPT = statement(
  'jobs_give_back_attempt',
  `UPDATE scheduled_jobs j SET attempts = j.attempts - 1
    WHERE ${HELD} AND j.lease_token = $1::jsonb ->> j.id`,
);

/**
 * Starts price checks claimed ahead of their time, now that it came ($2): counts their run and sets
 * `started_at` for the jobs of $1 (`{ "<id>": "<lease token>" }`) still held and not started.
 * Their lease ran from their time (CLAIM), so on time it has nearly all of its $3 ms left and is
 * kept: the update then changes no indexed column and is a HOT one (migration 0051); a batch
 * started late, with less than half its lease left, gets $3 ms from now. Returns what changed of
 * the jobs started: those only are run.
 */
export const START = statement(
  'jobs_start',
  `UPDATE scheduled_jobs j
      SET attempts = j.attempts + 1, started_at = $2,
          lease_until = CASE WHEN j.lease_until < $2::timestamptz + make_interval(secs => $3::double precision / 2000)
                             THEN $2::timestamptz + make_interval(secs => $3::double precision / 1000)
                             ELSE j.lease_until END
    WHERE ${HELD} AND j.lease_token = $1::jsonb ->> j.id AND j.started_at IS NULL
   RETURNING j.id, j.attempts, j.started_at`,
);

/**
 * Gives back price checks claimed ahead that their worker will not run (it is stopping): PENDING
 * again, for the jobs $1 still held by one of the leases $2 and never started;
 * the other workers are woken.
 */
export const RELEASE = statement(
  'jobs_release',
  wakingWrite(
    JOBS_CHANNEL,
    `UPDATE scheduled_jobs SET status = 'PENDING', lease_token = NULL, lease_until = NULL
      WHERE id = ANY($1::text[]) AND lease_token = ANY($2::text[]) AND started_at IS NULL`,
    'id',
  ),
);

/**
 * Locks the jobs of $1 (`{ "<id>": "<lease token>" }`) that still hold their lease, before their
 * refunds, events and callbacks are written in the same transaction and FINISH ends them: the rows
 * a lost lease no longer allows are left alone. Job rows first, then accounts (as FINISH did alone).
 */
export const LOCK_HELD = statement(
  'jobs_lock_held',
  `SELECT j.id FROM scheduled_jobs j
    WHERE ${HELD} AND j.lease_token = $1::jsonb ->> j.id
      FOR UPDATE OF j`,
);

export const OPERATOR_LIST = `SELECT ${COLUMNS} FROM scheduled_jobs
  WHERE ($1::text IS NULL OR status = $1) AND ($2::timestamptz IS NULL OR (status = 'PENDING' AND scheduled_for <= $2))
  ORDER BY created_at DESC, id DESC LIMIT $3`;

/**
 * Retention (docs/operations.md#retention): deletes up to $2 jobs that finished (or were cancelled)
 * before $1; returns how many went. Their charges and refunds stay in the ledger, which is never
 * pruned. Reads the range of scheduled_jobs_finished; its shape is `pruneStatement`'s
 * (db/prune.ts).
 */
export const PRUNE = pruneStatement({
  name: 'jobs_prune',
  table: 'scheduled_jobs',
  key: 'id',
  ended: "status IN ('COMPLETED', 'FAILED', 'CANCELLED') AND finished_at < $1",
  orderBy: 'finished_at',
});
