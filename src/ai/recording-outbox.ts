import { randomBase62 } from '../lib/ids.js';
import { type CallbackOutbox, validateHttpsCallbackUrl } from './callback-port.js';

/**
 * TEST ONLY. The table the recording outbox writes to; tests (and a worker process started with
 * AI_TEST_RECORD_CALLBACKS=true) create it themselves — no migration does. No unique index: a
 * callback written twice must show up as two rows.
 */
export const RECORDED_CALLBACKS_TABLE = `
  CREATE TABLE IF NOT EXISTS test_recorded_callbacks (
    id         text PRIMARY KEY,
    account_id text NOT NULL,
    url        text NOT NULL,
    type       text NOT NULL,
    status     text NOT NULL,
    request_id text NOT NULL,
    data       jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
  )`;

/**
 * TEST ONLY: a CallbackOutbox that records each callback as a row of `test_recorded_callbacks` in
 * the caller's transaction, so tests can prove that a result and its callback commit together, and
 * that each result is reported once. It delivers nothing; the webhook outbox replaces it.
 */
export const recordingCallbackOutbox: CallbackOutbox = {
  validateCallbackUrl: validateHttpsCallbackUrl,
  async enqueueCallback(tx, input) {
    const id = `dlv_${randomBase62(22)}`;
    await tx.tx.query(
      `INSERT INTO test_recorded_callbacks (id, account_id, url, type, status, request_id, data)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [id, input.accountId, input.url, input.type, input.status, input.requestId, JSON.stringify(input.data)],
    );
    return id;
  },
  async deliveryView(db, deliveryId) {
    const [row] = await db.query('SELECT id FROM test_recorded_callbacks WHERE id = $1', [deliveryId]);
    return row ? { id: deliveryId, status: 'recorded' } : null;
  },
};
