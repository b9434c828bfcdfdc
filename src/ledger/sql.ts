import { statement } from '../db/database.js';

/**
 * Every money movement is ONE statement: the guarded balance update and the ledger entry commit
 * together or not at all, and concurrent movements on one account serialise on its row lock, so
 * entry ids follow balance order within an account. Never read-then-write (reliability.md §1.4).
 */

// The WHERE clause is re-evaluated after a concurrent update commits (READ COMMITTED), so
// `balance_micros >= $2` is race-free: of 500 concurrent 0.01 charges on 1.00, exactly 100 match.
export const CHARGE = statement(
  'ledger_charge',
  `WITH debited AS (
     UPDATE accounts SET balance_micros = balance_micros - $2
      WHERE id = $1 AND balance_micros >= $2
     RETURNING id, balance_micros
   )
   INSERT INTO ledger_entries (account_id, kind, amount_micros, balance_after_micros, operation, request_id, key_id)
   SELECT id, 'charge', -$2::bigint, balance_micros, $3, $4, $5 FROM debited
   RETURNING id, balance_after_micros`,
);

// A repeated reference violates ledger_entries_deposit_reference, which aborts the whole statement,
// balance update included.
export const DEPOSIT = statement(
  'ledger_deposit',
  `WITH credited AS (
     UPDATE accounts SET balance_micros = balance_micros + $2 WHERE id = $1
     RETURNING id, balance_micros
   )
   INSERT INTO ledger_entries (account_id, kind, amount_micros, balance_after_micros, reference, memo)
   SELECT id, 'deposit', $2::bigint, balance_micros, $3, $4 FROM credited
   RETURNING id, balance_after_micros`,
);

export const FIND_DEPOSIT = statement(
  'ledger_find_deposit',
  `SELECT id, account_id, amount_micros FROM ledger_entries WHERE kind = 'deposit' AND reference = $1`,
);

// The amount comes from the charge itself, so a refund can never exceed it; a second refund of the
// same charge violates ledger_entries_refund_once and aborts the statement.
export const REFUND = statement(
  'ledger_refund',
  `WITH original AS (
     SELECT id, account_id, -amount_micros AS amount
       FROM ledger_entries
      WHERE id = $1 AND kind = 'charge' AND ($2::text IS NULL OR account_id = $2)
   ), credited AS (
     UPDATE accounts a SET balance_micros = a.balance_micros + o.amount
       FROM original o
      WHERE a.id = o.account_id
     RETURNING a.id, a.balance_micros, o.amount, o.id AS original_id
   )
   INSERT INTO ledger_entries (account_id, kind, amount_micros, balance_after_micros, refund_of, memo)
   SELECT id, 'refund', amount, balance_micros, original_id, $3 FROM credited
   RETURNING id, amount_micros, balance_after_micros`,
);

export const ADJUST = statement(
  'ledger_adjust',
  `WITH adjusted AS (
     UPDATE accounts SET balance_micros = balance_micros + $2
      WHERE id = $1 AND balance_micros + $2 >= 0
     RETURNING id, balance_micros
   )
   INSERT INTO ledger_entries (account_id, kind, amount_micros, balance_after_micros, memo)
   SELECT id, 'adjustment', $2::bigint, balance_micros, $3 FROM adjusted
   RETURNING id, balance_after_micros`,
);

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
