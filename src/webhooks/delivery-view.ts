import type { Queryable } from '../db/database.js';
import * as sql from './sql.js';

/** A delivery as its account and the operator see it: its row, its status, its attempts. */

export const DELIVERY_STATUSES = [
  'PENDING',
  'SENDING',
  'DELIVERED',
  'STOPPED',
  'CALLBACK_FAILED',
  'CANCELLED',
] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface DeliveryRow {
  id: string;
  account_id: string;
  url: string;
  /** `ai`, `price`, `test`: a request's callback; else an account event's type (its endpoint's delivery). */
  type: string;
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
