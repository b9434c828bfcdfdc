import { type Context, queryable, withTransaction } from '../context.js';
import { AppError, notFound, type ValidationProblem, validationError } from '../errors.js';
import { randomBase58 } from '../lib/ids.js';
import { newWebhookSecret } from './account-secret.js';
import { ROTATION_OVERLAP_MS } from './deliveries.js';
import * as sql from './endpoints-sql.js';
import { EVENT_TYPES, isEventType } from './event-types.js';
import { validateHttpsCallbackUrl } from './port.js';
import type { SecretBox } from './secret-box.js';

/** At most this many endpoints an account (docs/webhooks.md#endpoints). */
export const MAX_ENDPOINTS = 10;

export interface EndpointRow {
  id: string;
  account_id: string;
  mode: 'live' | 'sandbox';
  url: string;
  event_types: string[];
  description: string | null;
  enabled: boolean;
  secret_previous_until: Date | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

/** An endpoint as its account sees it (never its secret, but in the answers that make one). */
export function presentEndpoint(row: EndpointRow, now: Date) {
  const until = row.secret_previous_until;
  return {
    id: row.id,
    url: row.url,
    eventTypes: row.event_types,
    description: row.description,
    enabled: row.enabled,
    disabledAt: row.disabled_at?.toISOString() ?? null,
    disabledReason: row.disabled_reason,
    previousSecretValidUntil: until && until.getTime() > now.getTime() ? until.toISOString() : null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** What the account's endpoints may reach: the callbacks' rules (docs/webhooks.md#where-callbacks-may-go). */
export interface EndpointTargets {
  allowPrivateTargets: boolean;
}

export function newEndpointId(): string {
  return `we_${randomBase58(24)}`;
}

/**
 * `eventTypes`: catalog names, or `"*"` for every type (a list naming `"*"` is every type: it is kept
 * as `["*"]`). An unknown name is a VALIDATION_ERROR naming it, with the catalog as what is allowed.
 */
export function checkEventTypes(types: readonly string[], path: string): string[] {
  const problems: ValidationProblem[] = [];
  types.forEach((type, i) => {
    if (type !== '*' && !isEventType(type)) {
      problems.push({
        path: `${path}[${i}]`,
        message: `is not an event type: ${type}`,
        allowed: ['*', ...EVENT_TYPES],
      });
    }
  });
  if (problems.length > 0) throw validationError(problems);
  return types.includes('*') ? ['*'] : [...new Set(types)];
}

export async function createEndpoint(
  ctx: Context,
  box: SecretBox,
  targets: EndpointTargets,
  input: {
    accountId: string;
    mode: 'live' | 'sandbox';
    url: string;
    eventTypes: string[];
    description?: string | undefined;
  },
) {
  validateHttpsCallbackUrl(input.url, 'body.url', targets);
  const eventTypes = checkEventTypes(input.eventTypes, 'body.eventTypes');
  const id = newEndpointId();
  const secret = newWebhookSecret();
  const now = ctx.clock.now();
  const row = await withTransaction(ctx, async ({ tx }) => {
    await tx.query(sql.LOCK_ACCOUNT_ENDPOINTS, [input.accountId]);
    const [count] = await tx.query<{ n: number }>(sql.COUNT, [input.accountId]);
    if ((count?.n ?? 0) >= MAX_ENDPOINTS) {
      throw new AppError(
        'MAX_ENDPOINTS_EXCEEDED',
        `An account can register at most ${MAX_ENDPOINTS} webhook endpoints`,
        {
          details: { maxEndpoints: MAX_ENDPOINTS },
        },
      );
    }
    const [inserted] = await tx.query<EndpointRow>(sql.INSERT, [
      id,
      input.accountId,
      input.mode,
      input.url,
      eventTypes,
      input.description ?? null,
      box.seal(secret, id),
      now,
    ]);
    return inserted as EndpointRow;
  });
  return { ...presentEndpoint(row, now), secret };
}

export async function listEndpoints(ctx: Context, accountId: string) {
  const rows = await queryable(ctx).query<EndpointRow>(sql.LIST, [accountId]);
  const now = ctx.clock.now();
  return { endpoints: rows.map((row) => presentEndpoint(row, now)) };
}

export async function findEndpoint(
  ctx: Context,
  accountId: string,
  endpointId: string,
): Promise<EndpointRow> {
  const [row] = await queryable(ctx).query<EndpointRow>(sql.SELECT_ONE, [endpointId, accountId]);
  if (!row) throw notFound(`Webhook endpoint ${endpointId}`);
  return row;
}

export async function getEndpoint(ctx: Context, accountId: string, endpointId: string) {
  return presentEndpoint(await findEndpoint(ctx, accountId, endpointId), ctx.clock.now());
}

export async function updateEndpoint(
  ctx: Context,
  targets: EndpointTargets,
  accountId: string,
  endpointId: string,
  input: { url?: string; eventTypes?: string[]; description?: string | null; enabled?: boolean },
) {
  if (input.url !== undefined) validateHttpsCallbackUrl(input.url, 'body.url', targets);
  const eventTypes =
    input.eventTypes === undefined ? null : checkEventTypes(input.eventTypes, 'body.eventTypes');
  const now = ctx.clock.now();
  const [row] = await queryable(ctx).query<EndpointRow>(sql.UPDATE, [
    endpointId,
    accountId,
    input.url ?? null,
    eventTypes,
    input.description ?? null,
    input.description !== undefined,
    input.enabled ?? null,
    now,
  ]);
  if (!row) throw notFound(`Webhook endpoint ${endpointId}`);
  return presentEndpoint(row, now);
}

/** Deletes an endpoint: its deliveries still waiting are cancelled; those finished stay listed until retention. */
export async function deleteEndpoint(ctx: Context, accountId: string, endpointId: string) {
  const [row] = await queryable(ctx).query<{ id: string; cancelled: number }>(sql.DELETE, [
    endpointId,
    accountId,
    ctx.clock.now(),
  ]);
  if (!row) throw notFound(`Webhook endpoint ${endpointId}`);
  return { id: row.id, deleted: true as const, cancelledDeliveries: row.cancelled };
}

/** A new secret for the endpoint, shown once; the previous one signs beside it for 24 hours. */
export async function rotateEndpointSecret(
  ctx: Context,
  box: SecretBox,
  accountId: string,
  endpointId: string,
) {
  const secret = newWebhookSecret();
  const now = ctx.clock.now();
  const until = new Date(now.getTime() + ROTATION_OVERLAP_MS);
  const [row] = await queryable(ctx).query(sql.ROTATE_SECRET, [
    endpointId,
    accountId,
    box.seal(secret, endpointId),
    until,
    now,
  ]);
  if (!row) throw notFound(`Webhook endpoint ${endpointId}`);
  return { id: endpointId, secret, previousSecretValidUntil: until.toISOString() };
}
