import { statement } from '../db/database.js';
import { pruneStatement } from '../db/prune.js';
import { wakingWrite } from '../queue/wake.js';

/** The NOTIFY channel of AI requests: the submitting transaction wakes the workers with it. */
export const AI_CHANNEL = 'ai_requests';

// The request and the workers' wake-up in one statement (queue/wake.ts).
export const INSERT_REQUEST = statement(
  'ai_insert_request',
  wakingWrite(
    AI_CHANNEL,
    `INSERT INTO ai_requests (id, account_id, key_id, mode, question, outcomes, context, confidence_threshold,
                              callback_url, market_id, charge_entry_id, cost_micros, balance_after_micros, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
    'id',
  ),
);

const REQUEST_COLUMNS = `id, account_id, mode, status, question, outcomes, context, confidence_threshold, callback_url,
  market_id, charge_entry_id, cost_micros, balance_after_micros, result, error_code, error_message, refund_entry_id,
  attempts, lease_token, callback_delivery_id, created_at, completed_at`;

// Scoped by account: another account's request id is simply not found.
export const SELECT_REQUEST = statement(
  'ai_select_request',
  `SELECT ${REQUEST_COLUMNS} FROM ai_requests WHERE id = $1 AND account_id = $2`,
);

// The account's requests, newest first (ai_requests_account serves the order).
export const LIST_REQUESTS = statement(
  'ai_list_requests',
  `SELECT ${REQUEST_COLUMNS} FROM ai_requests
    WHERE account_id = $1 AND ($2::text IS NULL OR status = $2)
    ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`,
);

export const COUNT_REQUESTS = statement(
  'ai_count_requests',
  `SELECT count(*) AS total FROM ai_requests WHERE account_id = $1 AND ($2::text IS NULL OR status = $2)`,
);

const VOTE_COLUMNS = `request_id, position, model, outcome_index, confidence, reasoning, latency_ms, error_kind,
  error_message, input_tokens, output_tokens, evidence, searches, abstain_reason, search`;

export const SELECT_VOTES = statement(
  'ai_select_votes',
  `SELECT ${VOTE_COLUMNS} FROM ai_votes WHERE request_id = $1 ORDER BY position`,
);

// The votes of a page of requests (GET /ai/requests), in one statement: by the primary key.
export const SELECT_VOTES_OF = statement(
  'ai_select_votes_of',
  `SELECT ${VOTE_COLUMNS} FROM ai_votes WHERE request_id = ANY($1::text[]) ORDER BY request_id, position`,
);

/**
 * Takes up to $3 requests that are due — PENDING, or PROCESSING with an expired lease (their worker
 * died or hung) — and leases them until $2 under a fresh token $4. SKIP LOCKED lets concurrent
 * workers take different rows instead of queueing on the same ones.
 */
export const CLAIM = statement(
  'ai_claim',
  `UPDATE ai_requests r
      SET status = 'PROCESSING', lease_until = $2, lease_token = $4, attempts = r.attempts + 1,
          started_at = COALESCE(r.started_at, $1)
    WHERE r.id IN (
      SELECT id FROM ai_requests
       WHERE status IN ('PENDING', 'PROCESSING')
         AND (status = 'PENDING' OR lease_until <= $1)
       ORDER BY created_at
       LIMIT $3
       FOR UPDATE SKIP LOCKED)
   RETURNING ${REQUEST_COLUMNS}`,
);

/** When the next request becomes due: now for a PENDING one, at its lease's end for a PROCESSING one. */
export const NEXT_DUE = statement(
  'ai_next_due',
  `SELECT min(CASE WHEN status = 'PENDING' THEN created_at ELSE lease_until END) AS next
     FROM ai_requests WHERE status IN ('PENDING', 'PROCESSING')`,
);

/**
 * Stores one model's answer, only while the caller still holds the lease, and only the first answer
 * per model: a worker that lost its lease cannot add answers, and a resumed resolution keeps the
 * answers it found. FOR SHARE makes the lease check wait for, and then see, a concurrent claim that
 * takes the request over. Returns a row when the answer was stored.
 */
export const SAVE_VOTE = statement(
  'ai_save_vote',
  `INSERT INTO ai_votes (request_id, position, model, outcome_index, confidence, reasoning, latency_ms,
                         error_kind, error_message, input_tokens, output_tokens, answered_at,
                         evidence, searches, abstain_reason, search)
   SELECT $1::text, $3::smallint, $4::text, $5::integer, $6::double precision, $7::text, $8::integer,
          $9::text, $10::text, $11::integer, $12::integer, $13::timestamptz,
          $14::jsonb, $15::integer, $16::text, $17::text
    WHERE EXISTS (SELECT 1 FROM ai_requests WHERE id = $1 AND lease_token = $2 AND status = 'PROCESSING' FOR SHARE)
   ON CONFLICT (request_id, position) DO NOTHING
   RETURNING position`,
);

/**
 * The finishing transaction's first statement: locks the request if this worker still holds its
 * lease. No row: another worker took it over (or finished it), and this one must write nothing.
 */
export const LOCK_IF_LEASED = statement(
  'ai_lock_if_leased',
  `SELECT id FROM ai_requests WHERE id = $1 AND lease_token = $2 AND status = 'PROCESSING' FOR UPDATE`,
);

/** When the last stored answer of a request came: the time its attestation states. */
export const LAST_ANSWERED = statement(
  'ai_last_answered',
  'SELECT max(answered_at) AS at FROM ai_votes WHERE request_id = $1',
);

export const FINISH = statement(
  'ai_finish',
  `UPDATE ai_requests
      SET status = $2, result = $3, error_code = $4, error_message = $5, refund_entry_id = $6,
          callback_delivery_id = $7, completed_at = $8, lease_until = NULL, lease_token = NULL
    WHERE id = $1`,
);

/**
 * Retention (docs/operations.md#retention): deletes up to $2 requests that finished before $1, with
 * their votes; returns how many requests went. Their ledger entries stay (the ledger is never
 * pruned; nothing in it refers to a request row). Reads the range of ai_requests_finished; the
 * shape is `pruneStatement`'s (db/prune.ts).
 */
export const PRUNE = pruneStatement({
  name: 'ai_prune',
  table: 'ai_requests',
  key: 'id',
  ended: "status IN ('COMPLETED', 'FAILED') AND completed_at < $1",
  orderBy: 'completed_at',
  dependents: [{ table: 'ai_votes', column: 'request_id' }],
});
