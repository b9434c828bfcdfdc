import { type Context, queryable } from '../context.js';
import { validationError } from '../errors.js';
import { type CursorCodec, fingerprint, isTimestampKey } from '../http/cursor.js';
import { findEndpoint } from './endpoints.js';
import { type DeliveryRow, type DeliveryStatus, presentDelivery } from './outbox.js';
import * as sql from './sql.js';

/** How far back POST /webhooks/endpoints/:id/recover may reach (docs/webhooks.md#endpoint-health). */
export const RECOVER_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;

interface AttemptRow {
  delivery_id: string;
  attempt: number;
  attempted_at: Date;
  status_code: number | null;
  error: string | null;
  latency_ms: number;
}

/**
 * What a cursor of an endpoint's deliveries is bound to: the endpoint and the filters. Its position
 * is the last delivery listed (its creation time, to the microsecond, and its id).
 */
function deliveriesFingerprint(endpointId: string, filter: DeliveryFilter): string {
  return fingerprint(['endpoint-deliveries', endpointId, filter.status, filter.eventType, filter.since]);
}

interface DeliveryFilter {
  status?: DeliveryStatus | undefined;
  eventType?: string | undefined;
  since?: string | undefined;
  cursor?: string | undefined;
  limit?: number | undefined;
}

/**
 * An endpoint's deliveries with their attempts, newest first, 50 a page; `nextCursor` continues
 * after the last one (null: no more), signed for this endpoint and these filters (src/http/cursor.ts):
 * an altered cursor, or one of another endpoint or filter, is 400 VALIDATION_ERROR. Another account's
 * endpoint is 404 NOT_FOUND.
 */
export async function listEndpointDeliveries(
  ctx: Context,
  cursors: CursorCodec,
  accountId: string,
  endpointId: string,
  filter: DeliveryFilter,
) {
  await findEndpoint(ctx, accountId, endpointId);
  const print = deliveriesFingerprint(endpointId, filter);
  const after = filter.cursor ? cursors.decode(filter.cursor, print, isTimestampKey) : null;
  const limit = filter.limit ?? 50;
  const db = queryable(ctx);
  const rows = await db.query<DeliveryRow & { event_id: string | null; created_text: string }>(
    sql.ENDPOINT_DELIVERIES,
    [
      endpointId,
      filter.status ?? null,
      filter.eventType ?? null,
      filter.since ? new Date(filter.since) : null,
      after?.key ?? null,
      after?.id ?? null,
      limit + 1,
    ],
  );
  const page = rows.slice(0, limit);
  const attempts =
    page.length === 0 ? [] : await db.query<AttemptRow>(sql.ATTEMPTS_OF, [page.map((row) => row.id)]);
  const last = page.at(-1);
  return {
    deliveries: page.map((row) => ({
      ...presentDelivery(row),
      eventId: row.event_id,
      attempts: attempts
        .filter((a) => a.delivery_id === row.id)
        .map((a) => ({
          attempt: a.attempt,
          at: a.attempted_at.toISOString(),
          statusCode: a.status_code,
          error: a.error,
          latencyMs: a.latency_ms,
        })),
    })),
    nextCursor:
      rows.length > limit && last ? cursors.encode({ key: last.created_text, id: last.id }, print) : null,
  };
}

/**
 * Sends again every failed (CALLBACK_FAILED) delivery of an endpoint created since `since`, at most
 * 7 days back: one more attempt each, due now, with the same `webhook-id`. Answers how many.
 */
export async function recoverEndpoint(ctx: Context, accountId: string, endpointId: string, since: string) {
  const now = ctx.clock.now();
  const from = new Date(since);
  if (now.getTime() - from.getTime() > RECOVER_WINDOW_MS) {
    throw validationError([
      {
        path: 'body.since',
        message: 'must be at most 7 days ago',
        allowed: [new Date(now.getTime() - RECOVER_WINDOW_MS).toISOString()],
      },
    ]);
  }
  await findEndpoint(ctx, accountId, endpointId);
  const rows = await queryable(ctx).query(sql.RECOVER, [endpointId, from, now]);
  return { id: endpointId, since: from.toISOString(), queued: rows.length };
}
