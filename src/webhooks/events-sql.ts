import { statement } from '../db/database.js';
import { pruneStatement } from '../db/prune.js';
import { MAX_ATTEMPTS } from './outbox.js';
import { DELIVERIES_CHANNEL, EVENTS_CHANNEL } from './sql.js';

/**
 * Account events and their deliveries in one statement, in the caller's transaction — one event or
 * a batch made in one transaction (a watcher chunk's `deposit.credited`, a finishing batch's
 * `job.completed`, docs/jobs.md#claims). Each element of the arrays ($1 ids, $2 accounts, $3 modes,
 * $4 types, $5 the data the row keeps, $6 times, $7 payloads, $9 once-keys) is an event row — none
 * when its once-key was already used (the unique index holds the keys only: migration 0054) — and
 * one PENDING outbox row per enabled endpoint of that account and mode
 * subscribed to its type (or to '*'), with the payload and id `<event id>_<endpoint id>` (its
 * `webhook-id`), at most $8 attempts. Answers each event recorded with its deliveries. When a
 * delivery was written, the workers and each account's streams are woken (delivered at commit:
 * queue/wake.ts; the uncorrelated subquery runs once a statement). 1,000 events with 3 endpoints
 * each (PostgreSQL, load 12–15 on 2 cores): 0.9–1.0 s one statement at a time, 0.3–0.4 s in this
 * one. Deliveries are counted by a join, not a subquery per event (that made it quadratic).
 */
export const RECORD_EVENTS = statement(
  'account_events_record',
  `WITH input AS (
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[],
                          $7::text[], $9::text[])
       AS i(id, account_id, mode, type, data, created_at, payload, once_key)
   ), event AS (
     INSERT INTO account_events (id, account_id, mode, type, data, created_at, once_key)
     SELECT id, account_id, mode, type, data::jsonb, created_at, once_key FROM input
     ON CONFLICT (once_key) WHERE once_key IS NOT NULL DO NOTHING
     RETURNING id, account_id, mode, type, created_at
   ), delivered AS (
     INSERT INTO webhook_deliveries (id, account_id, url, type, request_id, payload, status, due_at, max_attempts,
                                     created_at, endpoint_id, event_id)
     SELECT ev.id || '_' || e.id, ev.account_id, e.url, ev.type, ev.id, i.payload, 'PENDING', ev.created_at, $8,
            ev.created_at, e.id, ev.id
       FROM event ev JOIN input i ON i.id = ev.id
       JOIN webhook_endpoints e ON e.account_id = ev.account_id AND e.mode = ev.mode
      WHERE e.enabled AND (ev.type = ANY (e.event_types) OR '*' = ANY (e.event_types))
     RETURNING account_id, event_id
   ), counted AS (
     SELECT event_id, count(*) AS n FROM delivered GROUP BY event_id
   )
   SELECT ev.id, coalesce(c.n, 0)::integer AS deliveries,
          (SELECT count(*) FROM (SELECT DISTINCT account_id FROM delivered) d
            WHERE pg_notify('${DELIVERIES_CHANNEL}', '') IS NOT NULL
              AND pg_notify('${EVENTS_CHANNEL}', d.account_id) IS NOT NULL)::integer AS woke
     FROM event ev LEFT JOIN counted c ON c.event_id = ev.id`,
);

/**
 * Retention (docs/operations.md#retention): up to $2 events made before $1 whose deliveries are all
 * finished (their deliveries go by their own rule, PRUNE_DELIVERIES), oldest first. Each event's
 * unfinished deliveries are one probe of their own partial index (migration 0056): without it the
 * check was a hash anti-join over every event past the cutoff, for each batch.
 */
export const PRUNE_EVENTS = pruneStatement({
  name: 'account_events_prune',
  table: 'account_events',
  key: 'id',
  ended: `created_at < $1 AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d
            WHERE d.event_id = account_events.id AND d.status IN ('PENDING', 'SENDING'))`,
  orderBy: 'created_at',
});

/**
 * The events of rows a statement already has, and their deliveries, as CTEs to append to that
 * statement's own `WITH` (a finishing batch's `job.completed`, src/jobs/sql.ts): the statement
 * defines `told` (id, account_id, mode, type, data jsonb, created_at, and whatever `payloadData`
 * reads) and ends with a SELECT that may read `delivered` and `woken` (see RECORD_EVENTS, of which
 * this is the shape without once-keys: every row of `told` is an event, so its deliveries are read
 * from `told`, joined to the endpoints only — a join of `told` to the inserted rows was planned as a
 * nested loop, 1,000 × 1,000 comparisons for a batch). The delivery body is RECORD_EVENTS' `{ id, type, createdAt,
 * mode, data }`, byte for byte, built here from `payloadData` (SQL over `t`, a row of `told`: the
 * event's data as JSON text) only for the events an endpoint takes: a batch for an account with no
 * endpoint builds none. `woken` is an expression that wakes the workers and the accounts' streams
 * when a delivery was written.
 */
export function eventsOf(payloadData: string): { ctes: string; woken: string } {
  const createdAt = `to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  const payload = `'{"id":' || to_json(t.id)::text || ',"type":' || to_json(t.type)::text || ',"createdAt":"' ||
       ${createdAt} || '","mode":' || to_json(t.mode)::text || ',"data":' || (${payloadData}) || '}'`;
  return {
    ctes: `, event AS (
     INSERT INTO account_events (id, account_id, mode, type, data, created_at)
     SELECT id, account_id, mode, type, data, created_at FROM told
     RETURNING id
   ), delivered AS (
     INSERT INTO webhook_deliveries (id, account_id, url, type, request_id, payload, status, due_at, max_attempts,
                                     created_at, endpoint_id, event_id)
     SELECT t.id || '_' || e.id, t.account_id, e.url, t.type, t.id, ${payload}, 'PENDING', t.created_at,
            ${MAX_ATTEMPTS}, t.created_at, e.id, t.id
       FROM told t JOIN webhook_endpoints e ON e.account_id = t.account_id AND e.mode = t.mode
      WHERE e.enabled AND (t.type = ANY (e.event_types) OR '*' = ANY (e.event_types))
     RETURNING account_id
   )`,
    woken: `(SELECT count(*) FROM (SELECT DISTINCT account_id FROM delivered) d
            WHERE pg_notify('${DELIVERIES_CHANNEL}', '') IS NOT NULL
              AND pg_notify('${EVENTS_CHANNEL}', d.account_id) IS NOT NULL)::integer`,
  };
}
