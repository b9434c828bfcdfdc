import { statement } from '../db/database.js';

/**
 * Every money movement is ONE statement: the guarded balance update and the ledger entry commit
 * together or not at all, and concurrent movements on one account serialise on its row lock, so
 * entry ids follow balance order within an account. Never read-then-write: a check followed by a
 * separate write lets two concurrent charges both pass the check.
 */

/** A live account's low-balance threshold until it sets its own (PUT /account/alerts). */
export const DEFAULT_LOW_BALANCE_MICROS = 5_000_000n;

// The WHERE clause is re-evaluated after a concurrent update commits (READ COMMITTED), so
// `balance_micros >= $2` is race-free: of 500 concurrent 0.01 charges on 1.00, exactly 100 match.
export const CHARGE = statement(
  'ledger_charge',
  `WITH debited AS (
     UPDATE accounts SET balance_micros = balance_micros - $2
      WHERE id = $1 AND balance_micros >= $2
     RETURNING id, balance_micros, ${thresholds('accounts')} AS thresholds
   ), alerted AS (
     ${lowAlerts('debited', 'balance_micros + $2', 'balance_micros')}
   )
   INSERT INTO ledger_entries (account_id, kind, amount_micros, balance_after_micros, operation, request_id, key_id)
   SELECT id, 'charge', -$2::bigint, balance_micros, $3, $4, $5 FROM debited
   RETURNING id, balance_after_micros`,
);

/**
 * An account's low-balance thresholds (docs/webhooks.md#balance-alerts), `alias` being the accounts
 * row: its own, or by default 5.00 USD on a live account and none on a sandbox one (the same
 * default is written in migration 0049's ledger_charge_batch).
 */
export function thresholds(alias: string): string {
  return `COALESCE(${alias}.low_balance_micros, CASE WHEN ${alias}.mode = 'live' THEN '{${DEFAULT_LOW_BALANCE_MICROS}}'::bigint[] ELSE '{}'::bigint[] END)`;
}

/**
 * The alerts of a movement, in the movement's own statement: one `low` alert per threshold of
 * `source` (rows with `id`, `thresholds` and the columns named) that the balance crossed downwards,
 * from at or above it (`before`) to below it (`after`). Concurrent movements of an account serialise
 * on its row, each seeing the balance the previous one left, so each crossing is seen by exactly one
 * statement; a balance back at or above a threshold is what re-arms it. A movement that crosses
 * nothing inserts no row.
 */
function lowAlerts(source: string, before: string, after: string): string {
  return `INSERT INTO balance_alerts (account_id, kind, threshold_micros, balance_micros)
     SELECT s.id, 'low', th.threshold, s.${after}
       FROM ${source} s CROSS JOIN LATERAL unnest(s.thresholds) AS th(threshold)
      WHERE s.${after} < th.threshold AND s.${before} >= th.threshold`;
}

/**
 * The locking skeleton both batch statements of the ledger share (CHARGE_COVERED and
 * CREDIT_DEPOSITS), written once so that they cannot drift apart: `items`, the batch's arrays
 * unnested with each item's 1-based position (`$1` accounts and `$2` amounts, then `columns` of
 * `types` as `$3`…); `locked`, the batch's accounts locked in id order — the one lock order every
 * batch, on any instance, takes, so two batches cannot deadlock; and `totals`, each locked account's
 * balance and the sum of its items. The CTEs that follow decide, number and write.
 */
function lockedBatch(columns: readonly string[], types: readonly string[]): string {
  const names = ['account_id', 'amount', ...columns];
  const arrays = ['text', 'bigint', ...types].map((type, i) => `$${i + 1}::${type}[]`);
  return `items AS MATERIALIZED (
     SELECT ${names.map((n) => `t.${n}`).join(', ')}, t.item::integer AS item
       FROM unnest(${arrays.join(', ')})
            WITH ORDINALITY AS t(${names.join(', ')}, item)
   ), locked AS MATERIALIZED (
     SELECT a.id, a.balance_micros, ${thresholds('a')} AS thresholds FROM accounts a
      WHERE a.id IN (SELECT account_id FROM items) ORDER BY a.id FOR UPDATE
   ), totals AS MATERIALIZED (
     SELECT l.id AS account_id, l.balance_micros AS balance, sum(i.amount)::bigint AS total
       FROM locked l JOIN items i ON i.account_id = l.id
      GROUP BY l.id, l.balance_micros
`;
}

/** The arrays CHARGE_COVERED_STORING adds: each item's answer to store ($6–$11). */
const ANSWER_COLUMNS = [
  'answer_key',
  'answer_print',
  'answer_head',
  'answer_part',
  'answer_tail',
  'answer_at',
];
const ANSWER_TYPES = ['text', 'text', 'text', 'text', 'text', 'timestamptz'];

/**
 * Charges in batches (the coalescing biller), first pass: one statement charges every item of each
 * account whose balance covers all of its items in the batch, which under load is nearly always
 * every account. Accounts are locked in id order (so batches from several instances cannot
 * deadlock), entry ids are drawn in (account, arrival) order while the locks are held, so within an
 * account they follow the running balance, and each changed balance is written once.
 * Returns a row per charged item (`item` is its 1-based position) and, for each account that does
 * not cover its items, one row with `item` NULL and the account's balance; the coalescing biller
 * decides those items one by one with CHARGE_EACH.
 */
function chargeCoveredSql(storing: boolean): string {
  // A plain INSERT: a key that exists already violates idempotency_keys_pkey, which aborts the
  // whole statement, charges included (the biller then takes the transactional path).
  const stored = storing
    ? `, stored AS (
     INSERT INTO idempotency_keys (account_id, idempotency_key, fingerprint, request_id, status,
            response_status, response_body, response_part, response_tail, created_at)
     SELECT c.account_id, c.answer_key, c.answer_print, c.request_id, 'done', 200,
            CASE WHEN c.answer_part IS NULL THEN c.answer_head || c.usd || '"}' ELSE c.answer_head END,
            c.answer_part,
            CASE WHEN c.answer_part IS NULL THEN NULL ELSE c.answer_tail || c.usd || '"}' END,
            c.answer_at
       FROM (SELECT ch.*, ${usdText('ch.balance_after')} AS usd FROM charged ch WHERE ch.answer_key IS NOT NULL) c
   )`
    : '';
  return `WITH ${lockedBatch(
    ['operation', 'request_id', 'key_id', ...(storing ? ANSWER_COLUMNS : [])],
    ['text', 'text', 'text', ...(storing ? ANSWER_TYPES : [])],
  )}   ), charged AS MATERIALIZED (
     SELECT nextval('ledger_entries_id_seq') AS entry_id, c.*
       FROM (SELECT i.*, (t.balance - sum(i.amount) OVER (PARTITION BY i.account_id ORDER BY i.item))::bigint AS balance_after
               FROM items i JOIN totals t ON t.account_id = i.account_id
              WHERE t.total <= t.balance
              ORDER BY i.account_id, i.item) AS c
   ), balances AS (
     UPDATE accounts a SET balance_micros = t.balance - t.total
       FROM totals t
      WHERE a.id = t.account_id AND t.total <= t.balance
   ), moved AS (
     SELECT t.account_id AS id, t.balance AS before, t.balance - t.total AS after, l.thresholds
       FROM totals t JOIN locked l ON l.id = t.account_id
      WHERE t.total <= t.balance
   ), alerted AS (
     ${lowAlerts('moved', 'before', 'after')}
   ), entries AS (
     INSERT INTO ledger_entries (id, account_id, kind, amount_micros, balance_after_micros, operation, request_id, key_id)
     OVERRIDING SYSTEM VALUE
     SELECT entry_id, account_id, 'charge', -amount, balance_after, operation, request_id, key_id FROM charged
   )${stored}
   SELECT item, entry_id, balance_after, NULL::text AS account_id FROM charged
   UNION ALL
   SELECT NULL, NULL, balance, account_id FROM totals WHERE total > balance`;
}

export const CHARGE_COVERED = statement('ledger_charge_covered', chargeCoveredSql(false));

/**
 * CHARGE_COVERED for a batch with answers to store (Idempotency-Key, idempotency/pending-answer.ts):
 * six more arrays give each item's key, fingerprint, its answer's head, shared part and tail up to
 * the balance, and its arrival (NULL for items without one). Each charged item's answer is
 * completed with the balance its charge left and inserted by the same statement, taking its key:
 * it commits with its charge in one round trip, like an unkeyed batch, instead of a transaction of
 * BEGIN, charge, store and COMMIT (docs/performance.md#idempotency-keys).
 */
export const CHARGE_COVERED_STORING = statement('ledger_charge_covered_storing', chargeCoveredSql(true));

/**
 * formatUsd (lib/money.ts) of a non-negative micro-dollar amount, in SQL: whole dollars, then the
 * six decimals without trailing zeros but at least two ("12.5" is "12.50"). Tested against formatUsd.
 */
export function usdText(micros: string): string {
  const fraction = `lpad((${micros} % 1000000)::text, 6, '0')`;
  return `((${micros} / 1000000)::text || '.' || CASE WHEN length(rtrim(${fraction}, '0')) < 2 THEN left(${fraction}, 2) ELSE rtrim(${fraction}, '0') END)`;
}

/**
 * Charges in batches, second pass (migration 0004): decides items one by one, in order, each
 * against the balance left by the ones before it, exactly as one guarded statement per charge would.
 * Returns a row per charged item.
 */
export const CHARGE_EACH = statement(
  'ledger_charge_each',
  'SELECT item, entry_id, balance_after FROM ledger_charge_batch($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[])',
);

// A repeated reference violates ledger_entries_deposit_reference, which aborts the whole statement,
// balance update included.
export const DEPOSIT = statement(
  'ledger_deposit',
  `WITH credited AS (
     UPDATE accounts SET balance_micros = balance_micros + $2, depleted_armed = true WHERE id = $1
     RETURNING id, balance_micros
   )
   INSERT INTO ledger_entries (account_id, kind, amount_micros, balance_after_micros, reference, memo)
   SELECT id, 'deposit', $2::bigint, balance_micros, $3, $4 FROM credited
   RETURNING id, balance_after_micros`,
);

/** Around a deposit made inside a caller's transaction (a duplicate reference must not abort it). */
export const SAVEPOINT_DEPOSIT = 'SAVEPOINT ledger_deposit';
export const RELEASE_DEPOSIT = 'RELEASE SAVEPOINT ledger_deposit';
export const ROLLBACK_TO_DEPOSIT = 'ROLLBACK TO SAVEPOINT ledger_deposit';

// A deposit capped by the balance it leaves: the account row is locked while the amount is decided
// (a concurrent credit is then seen, as the newest row version), so no interleaving passes $3.
export const DEPOSIT_UP_TO = `
  WITH target AS (
    SELECT id, LEAST($2::bigint, $3::bigint - balance_micros) AS amount
      FROM accounts WHERE id = $1 AND balance_micros < $3 FOR UPDATE
  ), credited AS (
    UPDATE accounts a SET balance_micros = a.balance_micros + t.amount, depleted_armed = true
      FROM target t WHERE a.id = t.id
    RETURNING a.id, a.balance_micros, t.amount
  )
  INSERT INTO ledger_entries (account_id, kind, amount_micros, balance_after_micros, reference, memo)
  SELECT id, 'deposit', amount, balance_micros, $4, $5 FROM credited
  RETURNING id, amount_micros, balance_after_micros`;

export const FIND_DEPOSIT = statement(
  'ledger_find_deposit',
  `SELECT id, account_id, amount_micros FROM ledger_entries WHERE kind = 'deposit' AND reference = $1`,
);

// The amount comes from the charge itself, so a refund can never exceed it; a second refund of the
// same charge violates ledger_entries_refund_once and aborts the statement.
export const REFUND = statement(
  'ledger_refund',
  `WITH original AS (
     SELECT id, account_id, -amount_micros AS amount, operation
       FROM ledger_entries
      WHERE id = $1 AND kind = 'charge' AND ($2::text IS NULL OR account_id = $2)
   ), credited AS (
     UPDATE accounts a SET balance_micros = a.balance_micros + o.amount, depleted_armed = true
       FROM original o
      WHERE a.id = o.account_id
     RETURNING a.id, a.balance_micros, o.amount, o.id AS original_id
   ), refunded AS (
     INSERT INTO ledger_entries (account_id, kind, amount_micros, balance_after_micros, refund_of, memo)
     SELECT id, 'refund', amount, balance_micros, original_id, $3 FROM credited
     RETURNING id, amount_micros, balance_after_micros, refund_of
   )
   SELECT r.id, r.amount_micros, r.balance_after_micros, o.operation
     FROM refunded r JOIN original o ON o.id = r.refund_of`,
);

export const ADJUST = statement(
  'ledger_adjust',
  `WITH adjusted AS (
     UPDATE accounts SET balance_micros = balance_micros + $2, depleted_armed = depleted_armed OR $2 > 0
      WHERE id = $1 AND balance_micros + $2 >= 0
     RETURNING id, balance_micros, ${thresholds('accounts')} AS thresholds
   ), alerted AS (
     ${lowAlerts('adjusted', 'balance_micros - $2', 'balance_micros')}
   )
   INSERT INTO ledger_entries (account_id, kind, amount_micros, balance_after_micros, memo)
   SELECT id, 'adjustment', $2::bigint, balance_micros, $3 FROM adjusted
   RETURNING id, balance_after_micros`,
);

/**
 * A paid request refused with 402 (docs/webhooks.md#balance-alerts): the first refusal since the
 * account was last credited disarms it and writes its `depleted` alert, in one statement; later
 * refusals match no row and write nothing.
 */
export const DEPLETED = statement(
  'ledger_depleted',
  `WITH disarmed AS (
     UPDATE accounts SET depleted_armed = false WHERE id = $1 AND depleted_armed
     RETURNING id, balance_micros
   )
   INSERT INTO balance_alerts (account_id, kind, balance_micros)
   SELECT id, 'depleted', balance_micros FROM disarmed
   RETURNING id`,
);

/** The account's alert settings (GET /account/alerts): its mode and its thresholds, NULL for the default. */
export const ALERT_SETTINGS = statement(
  'ledger_alert_settings',
  'SELECT mode, low_balance_micros FROM accounts WHERE id = $1',
);

export const SET_ALERT_SETTINGS = statement(
  'ledger_set_alert_settings',
  'UPDATE accounts SET low_balance_micros = $2::bigint[] WHERE id = $1 RETURNING mode, low_balance_micros',
);

/** Alerts whose event is not recorded yet, oldest first, claimed (skipped when another run holds them). */
export const CLAIM_ALERTS = `
  SELECT b.id, b.account_id, a.mode, b.kind, b.threshold_micros, b.balance_micros
    FROM balance_alerts b JOIN accounts a ON a.id = b.account_id
   WHERE b.emitted_at IS NULL
   ORDER BY b.id LIMIT $1
     FOR UPDATE OF b SKIP LOCKED`;

export const MARK_ALERTS_EMITTED = 'UPDATE balance_alerts SET emitted_at = $2 WHERE id = ANY ($1::bigint[])';

export const BALANCE = statement('ledger_balance', 'SELECT balance_micros FROM accounts WHERE id = $1');

export const ACCOUNT_EXISTS = statement('ledger_account_exists', 'SELECT 1 FROM accounts WHERE id = $1');

/** Accounts whose cached balance differs from the sum of their entries or from their last entry. */
export const RECONCILE_BALANCES = `
  SELECT a.id AS account_id, a.balance_micros, COALESCE(s.total, 0)::bigint AS ledger_total,
         COALESCE(s.last_balance, 0)::bigint AS last_balance_after
    FROM accounts a
    LEFT JOIN (
      SELECT account_id,
             SUM(amount_micros) AS total,
             (ARRAY_AGG(balance_after_micros ORDER BY id DESC))[1] AS last_balance
        FROM ledger_entries
       GROUP BY account_id
    ) s ON s.account_id = a.id
   WHERE a.balance_micros <> COALESCE(s.total, 0) OR a.balance_micros <> COALESCE(s.last_balance, 0)`;

/** Entries whose running balance does not follow from the previous entry of the same account. */
export const RECONCILE_CHAIN = `
  SELECT account_id, id FROM (
    SELECT account_id, id, amount_micros, balance_after_micros,
           LAG(balance_after_micros, 1, 0::bigint) OVER (PARTITION BY account_id ORDER BY id) AS previous
      FROM ledger_entries
  ) t
   WHERE previous + amount_micros <> balance_after_micros
   LIMIT 100`;

/** Refunds larger than their charge, or of something that is not a charge of the same account. */
export const RECONCILE_REFUNDS = `
  SELECT r.id FROM ledger_entries r
    LEFT JOIN ledger_entries c ON c.id = r.refund_of
   WHERE r.kind = 'refund'
     AND (c.id IS NULL OR c.kind <> 'charge' OR c.account_id <> r.account_id OR r.amount_micros > -c.amount_micros)
   LIMIT 100`;

/** An account's entries, newest first: before the cursor ($2), of a kind ($3), within [$4, $5]. */
export const HISTORY = statement(
  'ledger_history',
  `SELECT e.id, e.kind, e.amount_micros, e.balance_after_micros, e.operation, e.request_id, e.key_id, e.reference,
          e.refund_of, e.memo, e.created_at,
          d.asset AS deposit_asset, d.amount AS deposit_amount, d.decimals AS deposit_decimals,
          d.rate AS deposit_rate, d.slot AS deposit_slot, d.signature AS deposit_signature
     FROM ledger_entries e
     -- A deposit from the chain (src/deposits): its token, amount, rate and slot, shown with the entry.
     LEFT JOIN deposits d ON e.kind = 'deposit' AND d.reference = e.reference AND d.ledger_entry_id = e.id
    WHERE e.account_id = $1 AND ($2::bigint IS NULL OR e.id < $2::bigint) AND ($3::text IS NULL OR e.kind = $3)
      AND ($4::timestamptz IS NULL OR e.created_at >= $4) AND ($5::timestamptz IS NULL OR e.created_at <= $5)
    ORDER BY e.id DESC LIMIT $6`,
);

/**
 * Usage over [$2, $3) grouped by $4 (day, operation or key): charges count as requests and spend;
 * refunds give spend back on their own day, against the operation and key of the charge they
 * return. Served by ledger_entries_account (the account's entries), filtered by time.
 */
export const USAGE = statement(
  'ledger_usage',
  `SELECT CASE $4::text
            WHEN 'day' THEN to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')
            WHEN 'operation' THEN COALESCE(e.operation, c.operation, '')
            ELSE COALESCE(e.key_id, c.key_id, '')
          END AS grp,
          count(*) FILTER (WHERE e.kind = 'charge') AS requests,
          COALESCE(sum(-e.amount_micros) FILTER (WHERE e.kind = 'charge'), 0)::bigint AS charged,
          COALESCE(sum(e.amount_micros) FILTER (WHERE e.kind = 'refund'), 0)::bigint AS refunded
     FROM ledger_entries e
     LEFT JOIN ledger_entries c ON e.kind = 'refund' AND c.id = e.refund_of
    WHERE e.account_id = $1 AND e.kind IN ('charge', 'refund') AND e.created_at >= $2 AND e.created_at < $3
    GROUP BY 1`,
);

/**
 * Deposits in a batch (the deposit watcher's chunk, ledger/deposit-batch.ts), in one statement on
 * CHARGE_COVERED's skeleton (lockedBatch): the accounts locked in id order, entry ids drawn in (account, item)
 * order while the locks are held so each account's running balances chain, each balance written
 * once. $1–$4: account, amount, reference, memo per item. A reference already credited (or twice in
 * the batch) violates ledger_entries_deposit_reference and a missing account the entries' foreign
 * key: either aborts the whole statement, balances included. Returns a row per item.
 */
export const CREDIT_DEPOSITS = statement(
  'ledger_credit_deposits',
  `WITH ${lockedBatch(['reference', 'memo'], ['text', 'text'])}   ), credited AS MATERIALIZED (
     SELECT nextval('ledger_entries_id_seq') AS entry_id, c.*
       FROM (SELECT i.*,
                    (COALESCE(t.balance, 0) + sum(i.amount) OVER (PARTITION BY i.account_id ORDER BY i.item))::bigint
                      AS balance_after
               FROM items i LEFT JOIN totals t ON t.account_id = i.account_id
              ORDER BY i.account_id, i.item) AS c
   ), balances AS (
     UPDATE accounts a SET balance_micros = t.balance + t.total, depleted_armed = true
       FROM totals t WHERE a.id = t.account_id
   ), entries AS (
     INSERT INTO ledger_entries (id, account_id, kind, amount_micros, balance_after_micros, reference, memo)
     OVERRIDING SYSTEM VALUE
     SELECT entry_id, account_id, 'deposit', amount, balance_after, reference, memo FROM credited
   )
   SELECT item, entry_id, balance_after FROM credited`,
);
