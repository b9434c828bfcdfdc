import { type Sql, type Statement, statement } from '../db/database.js';
import { pruneStatement } from '../db/prune.js';

/**
 * Takes keys for a batch of requests (rows of account, key, fingerprint, request id): a new key is
 * inserted as `running`; a `running` key whose holder let its lock lapse (the process died
 * mid-request) is taken over by a retry of the same request. Returns the request ids that now hold
 * their key. Rows arrive sorted by (account, key), so concurrent batches lock in one order.
 */
export const CLAIM = statement(
  'idempotency_claim',
  `INSERT INTO idempotency_keys (account_id, idempotency_key, fingerprint, request_id, status, locked_until, created_at)
   SELECT u.account_id, u.idempotency_key, u.fingerprint, u.request_id, 'running',
          $5::timestamptz + make_interval(secs => $6::double precision / 1000), $5
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS u(account_id, idempotency_key, fingerprint, request_id)
   ON CONFLICT (account_id, idempotency_key) DO UPDATE
      SET request_id = EXCLUDED.request_id, locked_until = EXCLUDED.locked_until
    WHERE idempotency_keys.status = 'running'
      AND idempotency_keys.locked_until <= $5
      AND idempotency_keys.fingerprint = EXCLUDED.fingerprint
   RETURNING request_id`,
);

/** The key's state and, once done, its answer as first sent: head, shared part and tail joined. */
export const FIND = statement(
  'idempotency_find',
  `SELECT k.fingerprint, k.request_id, k.status, k.locked_until, k.response_status,
          CASE WHEN k.response_part IS NULL THEN k.response_body
               ELSE k.response_body || p.body || k.response_tail END AS response_body
     FROM idempotency_keys k
     LEFT JOIN idempotency_parts p ON p.hash = k.response_part
    WHERE k.account_id = $1 AND k.idempotency_key = $2`,
);

/** Stores the answer; only the holder can (a holder that lost its lock rolls back instead). */
export const COMPLETE = statement(
  'idempotency_complete',
  `UPDATE idempotency_keys
      SET status = 'done', locked_until = NULL, response_status = $4, response_body = $5
    WHERE account_id = $1 AND idempotency_key = $2 AND request_id = $3 AND status = 'running'
   RETURNING 1 AS ok`,
);

/**
 * Stores answers of requests charged in one transaction (pending-answer.ts), taking their keys: one
 * row of account, key, fingerprint, request id, the answer's head, part hash and tail, and the
 * request's arrival per answer, each value its own parameter. Whole 20 KB answers as text[]
 * elements were escaped by the driver character by character, and as one JSON document PostgreSQL
 * spent most of the statement parsing it (11 ms for 50 answers, against 5 ms this way). A key held
 * by a request of the same fingerprint whose lock lapsed is taken over (its first `created_at`
 * kept); any other existing key is left alone and its row not returned. Prepared per row count up
 * to PREPARED_MAX, so that a batch is not parsed and planned anew.
 */
export function insertAnswers(count: number): Sql {
  let sql = insertAnswersStatements[count];
  if (sql) return sql;
  const rows = Array.from({ length: count }, (_, i) => {
    const p = i * 8;
    return `($${p + 1}, $${p + 2}, $${p + 3}, $${p + 4}, 'done', NULL, 200, $${p + 5}, $${p + 6}, $${p + 7}, $${p + 8})`;
  });
  const text = `INSERT INTO idempotency_keys AS k (account_id, idempotency_key, fingerprint, request_id, status,
            locked_until, response_status, response_body, response_part, response_tail, created_at)
     VALUES ${rows.join(', ')}
   ON CONFLICT (account_id, idempotency_key) DO UPDATE
      SET request_id = EXCLUDED.request_id, status = 'done', locked_until = NULL, response_status = 200,
          response_body = EXCLUDED.response_body, response_part = EXCLUDED.response_part,
          response_tail = EXCLUDED.response_tail
    WHERE k.status = 'running' AND k.locked_until <= EXCLUDED.created_at
      AND k.fingerprint = EXCLUDED.fingerprint
   RETURNING k.request_id`;
  if (count > PREPARED_MAX) return text;
  sql = statement(`idempotency_insert_answers_${count}`, text);
  insertAnswersStatements[count] = sql;
  return sql;
}

/** Batches of more rows than this are sent unprepared (each size is a statement per connection). */
const PREPARED_MAX = 64;
const insertAnswersStatements: Statement[] = [];

/** A request that failed gives its key back, so the retry runs afresh. */
export const RELEASE = statement(
  'idempotency_release',
  `DELETE FROM idempotency_keys
    WHERE account_id = $1 AND idempotency_key = $2 AND request_id = $3 AND status = 'running'`,
);

/**
 * Retention: deletes up to $2 keys taken before $1 (their answers are kept 24 hours); returns how
 * many. Reads idempotency_keys_created, oldest first; its shape is `pruneStatement`'s
 * (db/prune.ts). The rows are deleted by their physical address (a TID scan):
 * the table has no one-column key, and joining the chosen keys back by (account_id,
 * idempotency_key) was planned as a sequential scan of the table (104 ms a batch on 200,000 keys,
 * against 5 ms). The rows are locked by the CTE, so nothing moves them before the delete.
 */
export const PRUNE = pruneStatement({
  name: 'idempotency_prune',
  table: 'idempotency_keys',
  key: 'ctid',
  ended: 'created_at < $1',
  orderBy: 'created_at',
});
