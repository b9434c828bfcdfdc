import type { Queryable } from '../db/database.js';
import { randomBase62 } from '../lib/ids.js';
import { type CallbackOutbox, validateHttpsCallbackUrl } from './port.js';
import { serialisePayload } from './signing.js';
import * as sql from './sql.js';

/**
 * When attempts are made, after the first (immediate) one: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h,
 * 10 h. After the eighth failed attempt the delivery is CALLBACK_FAILED.
 */
export const RETRY_DELAYS_MS = [
  5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

export const DELIVERY_STATUSES = [
  'PENDING',
  'SENDING',
  'DELIVERED',
  'STOPPED',
  'CALLBACK_FAILED',
  'CANCELLED',
] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** A delivery id is the Standard Webhooks `webhook-id`: `msg_` and 22 random base62 characters. */
export function newDeliveryId(): string {
  return `msg_${randomBase62(22)}`;
}

/**
 * The webhook outbox: a result's callback is a row written in the result's own transaction, with
 * the NOTIFY that wakes the delivery workers; it commits with the result or not at all. A callback
 * URL that could never be delivered (a non-public IP literal, `localhost`) is refused at submit
 * unless the deployment allows private targets (WEBHOOK_ALLOW_PRIVATE_TARGETS).
 */
export function createWebhookOutbox(targets: { allowPrivateTargets: boolean }): CallbackOutbox {
  return {
    ...webhookOutbox,
    validateCallbackUrl: (url, path) => validateHttpsCallbackUrl(url, path, targets),
  };
}

/** The outbox of a deployment that allows only public targets (the default). */
export const webhookOutbox: CallbackOutbox = {
  validateCallbackUrl: (url, path) => validateHttpsCallbackUrl(url, path, { allowPrivateTargets: false }),
  async enqueueCallback(tx, input) {
    const id = newDeliveryId();
    const now = tx.clock.now();
    const payload = serialisePayload({
      requestId: input.requestId,
      type: input.type,
      status: input.status,
      data: input.data,
      timestamp: now.toISOString(),
    });
    await tx.tx.query(sql.INSERT, [
      id,
      input.accountId,
      input.url,
      input.type,
      input.requestId,
      payload,
      now,
      MAX_ATTEMPTS,
    ]);
    return id;
  },
  deliveryView: (db, deliveryId) => findDelivery(db, deliveryId, null),
};

export interface DeliveryRow {
  id: string;
  account_id: string;
  url: string;
  type: 'ai' | 'price' | 'test';
  request_id: string;
  payload: string;
  status: DeliveryStatus;
  due_at: Date | null;
  attempts: number;
  max_attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  finished_at: Date | null;
  cancelled_at: Date | null;
}

interface AttemptRow {
  attempt: number;
  attempted_at: Date;
  status_code: number | null;
  error: string | null;
  latency_ms: number;
}

/** A delivery as its account sees it (without the payload's data: that is on the result's record). */
export function presentDelivery(row: DeliveryRow) {
  const pending = row.status === 'PENDING' || row.status === 'SENDING';
  return {
    id: row.id,
    webhookId: row.id,
    type: row.type,
    requestId: row.request_id,
    originalRequestId: row.request_id,
    url: row.url,
    status: row.status,
    attemptCount: row.attempts,
    nextAttemptAt: pending && row.due_at ? row.due_at.toISOString() : null,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    createdAt: row.created_at.toISOString(),
    finishedAt: row.finished_at?.toISOString() ?? null,
    cancelledAt: row.cancelled_at?.toISOString() ?? null,
  };
}

/** The same with every attempt. */
export function presentDeliveryDetail(row: DeliveryRow, attempts: AttemptRow[]) {
  return {
    ...presentDelivery(row),
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      at: a.attempted_at.toISOString(),
      statusCode: a.status_code,
      error: a.error,
      latencyMs: a.latency_ms,
    })),
  };
}

export type DeliveryView = ReturnType<typeof presentDeliveryDetail>;

/** One delivery with every attempt; `accountId` scopes it (null: any account, for operators). */
export async function findDelivery(
  db: Queryable,
  id: string,
  accountId: string | null,
): Promise<DeliveryView | null> {
  const [row] = await db.query<DeliveryRow>(sql.SELECT_ONE, [id, accountId]);
  if (!row) return null;
  return presentDeliveryDetail(row, await db.query<AttemptRow>(sql.SELECT_ATTEMPTS, [id]));
}
