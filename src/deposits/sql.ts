import { statement } from '../db/database.js';

/** The deposit watcher's statements (migration 0022). */

export const CURSORS = statement('deposits_cursors', 'SELECT address, signature FROM deposit_cursors');

export const SAVE_CURSOR = statement(
  'deposits_save_cursor',
  `INSERT INTO deposit_cursors (address, signature, slot, updated_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (address) DO UPDATE
       SET signature = EXCLUDED.signature, slot = EXCLUDED.slot, updated_at = EXCLUDED.updated_at`,
);

/** Which of the references $1 already have a final row (credited, unattributed, held, ignored). */
export const FINAL_OF = statement(
  'deposits_final_of',
  `SELECT reference FROM deposits WHERE reference = ANY($1::text[]) AND status <> 'pending' FOR UPDATE`,
);

const COLUMNS = `reference, signature, instruction, asset, amount, decimals, sender, slot, block_time, status,
  reason, account_id, rate, usd_micros, ledger_entry_id, seen_at, finalized_at`;

/** FINAL_OF without the lock: what a chunk need not price again (a rescan, a rerun). */
export const FINAL_AMONG = statement(
  'deposits_final_among',
  `SELECT reference FROM deposits WHERE reference = ANY($1::text[]) AND status <> 'pending'`,
);

/**
 * A chunk of finalized deposits' rows in one statement, in chunk order, each credited one with the
 * ledger entry that the ledger's batch credit (ledger/deposit-batch.ts) wrote just before, in the
 * same transaction; a pending row is made final. A row already final is left alone (the caller
 * locked and left those out: FINAL_OF).
 */
export const WRITE_FINAL_BATCH = statement(
  'deposits_write_final_batch',
  `INSERT INTO deposits (${COLUMNS})
   SELECT t.reference, t.signature, t.instruction, t.asset, t.amount, t.decimals, t.sender, t.slot, t.block_time,
          t.status, t.reason, t.account_id, t.rate, t.usd_micros, t.entry_id, $16::timestamptz, $16::timestamptz
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::numeric[], $6::smallint[], $7::text[],
                 $8::bigint[], $9::timestamptz[], $10::text[], $11::text[], $12::text[], $13::text[],
                 $14::bigint[], $15::bigint[])
          WITH ORDINALITY AS t(reference, signature, instruction, asset, amount, decimals, sender, slot,
                               block_time, status, reason, account_id, rate, usd_micros, entry_id, item)
    ORDER BY t.item
   ON CONFLICT (reference) DO UPDATE SET
     slot = EXCLUDED.slot, block_time = EXCLUDED.block_time, status = EXCLUDED.status,
     reason = EXCLUDED.reason, account_id = EXCLUDED.account_id, rate = EXCLUDED.rate,
     usd_micros = EXCLUDED.usd_micros, ledger_entry_id = EXCLUDED.ledger_entry_id,
     finalized_at = EXCLUDED.finalized_at
   WHERE deposits.status = 'pending'
   RETURNING reference, seen_at`,
);

/** A deposit seen at `confirmed`: shown as pending until it is finalized or disappears. */
export const WRITE_PENDING = statement(
  'deposits_write_pending',
  `INSERT INTO deposits (${COLUMNS})
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', $10, $11, NULL, NULL, NULL, $12, NULL)
   ON CONFLICT (reference) DO NOTHING`,
);

/** Pending rows no longer listed at `confirmed` (their fork abandoned): gone. */
export const DROP_STALE_PENDING = statement(
  'deposits_drop_stale_pending',
  `DELETE FROM deposits WHERE status = 'pending' AND NOT (reference = ANY($1::text[]))`,
);

export const RECORD_POLL = statement(
  'deposits_record_poll',
  `INSERT INTO deposit_watcher (id, last_poll_at, last_success_at, last_error, finalized_slot, processed_slot)
   VALUES (1, $1::timestamptz, CASE WHEN $2::text IS NULL THEN $1::timestamptz END, $2::text, $3::bigint, $4::bigint)
   ON CONFLICT (id) DO UPDATE SET
     last_poll_at = EXCLUDED.last_poll_at,
     last_success_at = COALESCE(EXCLUDED.last_success_at, deposit_watcher.last_success_at),
     last_error = EXCLUDED.last_error,
     finalized_slot = COALESCE(EXCLUDED.finalized_slot, deposit_watcher.finalized_slot),
     processed_slot = COALESCE(EXCLUDED.processed_slot, deposit_watcher.processed_slot)`,
);

export const WATCHER_STATE = statement(
  'deposits_watcher_state',
  `SELECT last_poll_at, last_success_at, last_error, finalized_slot, processed_slot FROM deposit_watcher WHERE id = 1`,
);

export const COUNTS = statement(
  'deposits_counts',
  `SELECT status, count(*)::bigint AS n, COALESCE(sum(usd_micros), 0)::bigint AS usd_micros
     FROM deposits GROUP BY status
   UNION ALL SELECT 'unreadable', count(*)::bigint, 0 FROM deposit_unreadable`,
);

/**
 * Transactions the watcher could not book (migration 0027), recorded once each: a second reading of
 * one (a rerun after a crash) changes nothing. Answers the ones recorded now, for the log.
 */
export const RECORD_UNREADABLE = statement(
  'deposits_record_unreadable',
  `INSERT INTO deposit_unreadable (signature, slot, block_time, reason, seen_at)
   SELECT t.signature, t.slot, t.block_time, t.reason, $5::timestamptz
     FROM unnest($1::text[], $2::bigint[], $3::timestamptz[], $4::text[]) AS t(signature, slot, block_time, reason)
   ON CONFLICT (signature) DO NOTHING
   RETURNING signature, reason`,
);

/** Transactions read and booked now (a rescan after a fix): no longer unreadable. */
export const CLEAR_UNREADABLE = statement(
  'deposits_clear_unreadable',
  'DELETE FROM deposit_unreadable WHERE signature = ANY($1::text[])',
);

export const LIST_UNREADABLE = statement(
  'deposits_list_unreadable',
  `SELECT signature, slot, block_time, reason, seen_at FROM deposit_unreadable
    ORDER BY slot DESC, signature DESC LIMIT $1`,
);

export const LIST = statement(
  'deposits_list',
  `SELECT ${COLUMNS} FROM deposits
    WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR account_id = $2)
    ORDER BY slot DESC, reference DESC LIMIT $3`,
);

export const LOCK_SIGNATURE = statement(
  'deposits_lock_signature',
  `SELECT ${COLUMNS} FROM deposits WHERE signature = $1 ORDER BY reference FOR UPDATE`,
);

/** The operator's assignment of an unattributed or held deposit: credited, at the rate applied. */
export const ASSIGN = statement(
  'deposits_assign',
  `UPDATE deposits SET status = 'credited', reason = 'operator', account_id = $2, ledger_entry_id = $3,
          rate = $4, usd_micros = $5
    WHERE reference = $1 AND status IN ('unattributed', 'held')`,
);
