import { statement } from '../db/database.js';
import { pruneStatement } from '../db/prune.js';
import { DELIVERIES_CHANNEL, EVENTS_CHANNEL } from './sql.js';

/**
 * The deliveries of the events of `events` (a row source `ev` with id, account_id, mode, type,
 * created_at): one PENDING outbox row per enabled endpoint of that account and mode subscribed to
 * the type (or to '*'), each with the payload `payload` and id `<event id>_<endpoint id>` (its
 * `webhook-id`), at most `maxAttempts` attempts. One declaration for one event and for many.
 */
function deliveriesOf(events: string, payload: string, maxAttempts: string): string {
  return `INSERT INTO webhook_deliveries (id, account_id, url, type, request_id, payload, status, due_at, max_attempts,
                                     created_at, endpoint_id, event_id)
     SELECT ev.id || '_' || e.id, ev.account_id, e.url, ev.type, ev.id, ${payload}, 'PENDING', ev.created_at,
            ${maxAttempts}, ev.created_at, e.id, ev.id
       FROM ${events} ev JOIN webhook_endpoints e ON e.account_id = ev.account_id AND e.mode = ev.mode
      WHERE e.enabled AND (ev.type = ANY (e.event_types) OR '*' = ANY (e.event_types))
     RETURNING account_id, event_id`;
}

/**
 * When a delivery was written, the workers and each account's streams are woken (delivered at
 * commit: queue/wake.ts): an uncorrelated subquery, evaluated once per statement.
 */
const WAKE_DELIVERED = `(SELECT count(*) FROM (SELECT DISTINCT account_id FROM delivered) d
            WHERE pg_notify('${DELIVERIES_CHANNEL}', '') IS NOT NULL
              AND pg_notify('${EVENTS_CHANNEL}', d.account_id) IS NOT NULL)::integer`;

/**
 * An account event and its deliveries in one statement, in the caller's transaction: the event row
 * ($1 id, $2 account, $3 mode, $4 type, $5 data, $6 time, $9 once-key), then its deliveries
 * (payload $7, at most $8 attempts). An event whose once-key was already used inserts nothing, and
 * so makes no delivery.
 */
export const RECORD_EVENT = statement(
  'account_events_record',
  `WITH event AS (
     INSERT INTO account_events (id, account_id, mode, type, data, created_at, once_key)
     VALUES ($1, $2, $3, $4, $5::jsonb, $6, $9)
     ON CONFLICT (once_key) DO NOTHING
     RETURNING id, account_id, mode, type, created_at
   ), delivered AS (
     ${deliveriesOf('event', '$7', '$8')}
   )
   SELECT ev.id, (SELECT count(*) FROM delivered)::integer AS deliveries, ${WAKE_DELIVERED} AS woke
     FROM event ev`,
);

/**
 * Many account events and their deliveries in one statement, in the caller's transaction: each
 * element of the arrays ($1 ids, $2 accounts, $3 modes, $4 types, $5 data, $6 times, $7 payloads,
 * $9 once-keys) recorded as RECORD_EVENT records one, at most $8 attempts a delivery; answers each
 * event recorded with its deliveries (one whose once-key was already used is not recorded). For
 * a batch made in one transaction: a watcher chunk's `deposit.credited`, a finishing batch's
 * `job.completed` (docs/jobs.md#claims). 1,000 events with 3 endpoints each (PostgreSQL, load
 * 12–15 on 2 cores): 0.9–1.0 s one statement at a time, 0.3–0.4 s in this one. Deliveries are
 * counted by a join, not a subquery per event (that made it quadratic).
 */
export const RECORD_EVENTS = statement(
  'account_events_record_many',
  `WITH input AS (
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[],
                          $7::text[], $9::text[])
       AS i(id, account_id, mode, type, data, created_at, payload, once_key)
   ), event AS (
     INSERT INTO account_events (id, account_id, mode, type, data, created_at, once_key)
     SELECT id, account_id, mode, type, data::jsonb, created_at, once_key FROM input
     ON CONFLICT (once_key) DO NOTHING
     RETURNING id, account_id, mode, type, created_at
   ), delivered AS (
     ${deliveriesOf(
       '(SELECT ev.id, ev.account_id, ev.mode, ev.type, ev.created_at, i.payload FROM event ev JOIN input i ON i.id = ev.id)',
       'ev.payload',
       '$8',
     )}
   ), counted AS (
     SELECT event_id, count(*) AS n FROM delivered GROUP BY event_id
   )
   SELECT ev.id, coalesce(c.n, 0)::integer AS deliveries, ${WAKE_DELIVERED} AS woke
     FROM event ev LEFT JOIN counted c ON c.event_id = ev.id`,
);

/**
 * Retention (docs/operations.md#retention): up to $2 events made before $1 whose deliveries are all
 * finished (their deliveries go by their own rule, PRUNE_DELIVERIES), oldest first.
 */
export const PRUNE_EVENTS = pruneStatement({
  name: 'account_events_prune',
  table: 'account_events',
  key: 'id',
  ended: `created_at < $1 AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d
            WHERE d.event_id = account_events.id AND d.status IN ('PENDING', 'SENDING'))`,
  orderBy: 'created_at',
});
