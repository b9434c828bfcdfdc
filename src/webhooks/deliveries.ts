import { type Context, queryable } from '../context.js';
import { AppError, notFound } from '../errors.js';
import { randomBase62 } from '../lib/ids.js';
import { type RateLimiter, type RateLimitPolicy, takeOperationLimit } from '../limits/index.js';
import { newWebhookSecret, webhookSecretOf } from './account-secret.js';
import { attemptDelivery, type ClaimedDelivery, type DeliveryDeps } from './delivery.js';
import {
  type DeliveryRow,
  type DeliveryStatus,
  findDelivery,
  newDeliveryId,
  presentDelivery,
} from './outbox.js';
import { validateHttpsCallbackUrl } from './port.js';
import type { SecretBox } from './secret-box.js';
import { serialisePayload } from './signing.js';
import * as sql from './sql.js';

/** How long the previous secret keeps signing after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

/** A page of deliveries, newest first (page 1 of 50 unless asked), with the count of all that match. */
export async function listDeliveries(
  ctx: Context,
  accountId: string | null,
  filter: { status?: DeliveryStatus | undefined; page?: number | undefined; pageSize?: number | undefined },
) {
  const status = filter.status ?? null;
  const page = filter.page ?? 1;
  const pageSize = filter.pageSize ?? 50;
  const [rows, [count]] = await Promise.all([
    queryable(ctx).query<DeliveryRow>(sql.LIST, [accountId, status, pageSize, (page - 1) * pageSize]),
    queryable(ctx).query<{ total: bigint | number }>(sql.COUNT, [accountId, status]),
  ]);
  return {
    deliveries: rows.map((row) => presentDelivery(row)),
    total: Number(count?.total ?? 0),
    page,
    pageSize,
  };
}

export async function getDelivery(ctx: Context, accountId: string | null, id: string) {
  const delivery = await findDelivery(queryable(ctx), id, accountId);
  if (!delivery) throw notFound(`Delivery ${id}`);
  return delivery;
}

/** One more attempt, due now, with the same `webhook-id` (docs/webhooks.md#redelivery). */
export async function redeliver(ctx: Context, accountId: string | null, id: string) {
  const [row] = await queryable(ctx).query(sql.REDELIVER, [id, accountId, ctx.clock.now()]);
  if (!row) throw notFound(`Delivery ${id}`);
  return getDelivery(ctx, accountId, id);
}

/**
 * Stops a delivery (docs/webhooks.md#cancelling-a-delivery): PENDING → CANCELLED, final, never sent
 * again; SENDING → marked, so the attempt in flight is the last (CANCELLED unless it delivered).
 * A finished delivery cannot be cancelled: 409 DELIVERY_CANNOT_CANCEL naming its status.
 */
export async function cancelDelivery(ctx: Context, accountId: string | null, id: string) {
  const [row] = await queryable(ctx).query<{ previous: DeliveryStatus; cancelled: boolean }>(sql.CANCEL, [
    id,
    accountId,
    ctx.clock.now(),
  ]);
  if (!row) throw notFound(`Delivery ${id}`);
  if (!row.cancelled) {
    throw new AppError(
      'DELIVERY_CANNOT_CANCEL',
      `Delivery ${id} cannot be cancelled: it is already ${row.previous}`,
      { details: { status: row.previous } },
    );
  }
  return getDelivery(ctx, accountId, id);
}

/** Admits one test event of an account at `now`, or throws 429 RATE_LIMIT_EXCEEDED. */
export type TestEventLimit = (accountId: string, now: Date) => Promise<void>;

/**
 * The limit of POST /webhooks/test: per account (not per key: an account may have 25 keys), in the
 * rate limiter's buckets, so it holds across API instances when they share Redis.
 */
export function testEventLimit(limiter: RateLimiter, policy: RateLimitPolicy): TestEventLimit {
  return async (accountId, now) => {
    const what = 'test webhooks a minute per account';
    const refusal = await takeOperationLimit(
      limiter,
      `webhook-test:${accountId}`,
      policy,
      now.getTime(),
      what,
    );
    if (refusal) throw refusal;
  };
}

/**
 * `POST /webhooks/test`: a signed `type: "test"` event sent now, in the request, and recorded as a
 * one-attempt delivery (listed with the others; redeliverable). Free, so limited on its own: a
 * refused one writes nothing.
 */
export async function sendTestEvent(
  ctx: Context,
  deps: DeliveryDeps & { testEventLimit: TestEventLimit },
  input: { accountId: string; url: string; requestId: string },
) {
  // Only the rules that need no network (a refused host is answered as the outcome, blocked_address),
  // and plain http:// to this machine when private targets are allowed (local development).
  validateHttpsCallbackUrl(input.url, 'body.callbackUrl', {
    allowPrivateTargets: deps.settings.allowPrivateTargets === true,
    checkHost: false,
  });
  const now = ctx.clock.now();
  await deps.testEventLimit(input.accountId, now);
  const id = newDeliveryId();
  const leaseToken = randomBase62(16);
  const payload = serialisePayload({
    requestId: input.requestId,
    type: 'test',
    status: 'completed',
    data: { message: 'A test event from Sibyl: your endpoint received and can verify it.' },
    timestamp: now.toISOString(),
  });
  // The row wakes the account's open streams when it commits (sql.ts, EVENTS_CHANNEL).
  const [written] = await queryable(ctx).query<
    Pick<ClaimedDelivery, 'webhook_secret' | 'webhook_secret_previous' | 'webhook_secret_previous_until'> & {
      woke: unknown;
    }
  >(sql.INSERT_TEST, [
    id,
    input.accountId,
    input.url,
    input.requestId,
    payload,
    now,
    new Date(now.getTime() + deps.settings.leaseMs),
    leaseToken,
  ]);
  if (!written) throw notFound(`Account ${input.accountId}`);
  const { woke: _woke, ...secrets } = written;
  const delivery: ClaimedDelivery = {
    id,
    account_id: input.accountId,
    url: input.url,
    type: 'test',
    request_id: input.requestId,
    payload,
    attempts: 1,
    max_attempts: 1,
    lease_token: leaseToken,
    ...secrets,
  };
  const { status, outcome } = await attemptDelivery(deps, delivery);
  return {
    deliveryId: id,
    webhookId: id,
    delivered: status === 'DELIVERED',
    status,
    statusCode: outcome.kind === 'response' ? outcome.statusCode : null,
    latencyMs: outcome.latencyMs,
    error: outcome.kind === 'error' ? `${outcome.code}: ${outcome.message}` : null,
  };
}

/**
 * A new signing secret, returned once. The previous one keeps signing beside it for 24 hours, so
 * receivers can switch without losing a callback.
 */
export async function rotateWebhookSecret(ctx: Context, box: SecretBox, accountId: string) {
  const secret = newWebhookSecret();
  const until = new Date(ctx.clock.now().getTime() + ROTATION_OVERLAP_MS);
  const [row] = await queryable(ctx).query(sql.ROTATE_SECRET, [
    accountId,
    box.seal(secret, accountId),
    until,
  ]);
  if (!row) throw notFound(`Account ${accountId}`);
  return { webhookSecret: secret, previousSecretValidUntil: until.toISOString() };
}

/** The signing secret in clear, for its owner (GET /account and the dashboard's "reveal"). */
export async function revealWebhookSecret(ctx: Context, box: SecretBox, accountId: string) {
  return { webhookSecret: await webhookSecretOf(ctx, box, accountId) };
}
