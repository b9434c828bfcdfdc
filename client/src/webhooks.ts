import { Webhook } from 'standardwebhooks';
import type { components } from './schema.js';

/** A callback's body, parsed: what `verifyWebhook` returns. */
export interface WebhookPayload {
  requestId: string;
  type: 'ai' | 'price' | 'test';
  status: 'completed' | 'failed';
  /** The result (an AI result, a price result with `jobId` for a scheduled job), or `{ error }`. */
  data: unknown;
  /** When the result was recorded (ISO 8601): the same on every attempt. */
  timestamp: string;
  /** Hex HMAC-SHA256 of the body without this field, under the newest secret (`X-Service-Signature`). */
  signature: string;
}

/** Request headers as Node (`req.headers`) or fetch (`request.headers`) hands them over. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

function flatHeaders(headers: WebhookHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  const entries = headers instanceof Headers ? [...headers.entries()] : Object.entries(headers);
  for (const [name, value] of entries) {
    if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(' ') : value;
  }
  return flat;
}

/**
 * For receivers: checks a callback on its raw body (the bytes as received, before any JSON
 * parsing) and returns the parsed payload; throws when it does not verify.
 *
 * The check is the Standard Webhooks one (the `standardwebhooks` library): a `v1` signature in
 * `webhook-signature` over `webhook-id.webhook-timestamp.body` under the secret, and a timestamp
 * within 5 minutes of now. That signature covers the whole raw body, its `signature` field
 * included, so nothing in the payload is unauthenticated. `X-Service-Signature` is not checked: it
 * is made with the newest secret only, so during the 24 hours after a rotation a receiver that
 * still has the previous secret could not check it, while its Standard Webhooks signature is sent
 * under both. Pass both secrets (`[newest, previous]`) when you have both.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string | readonly string[],
): WebhookPayload {
  const body = typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody);
  const flat = flatHeaders(headers);
  const secrets = typeof secret === 'string' ? [secret] : secret;
  if (secrets.length === 0) throw new Error('verifyWebhook: no secret given');
  let failure: unknown;
  for (const candidate of secrets) {
    try {
      return new Webhook(candidate).verify(body, flat) as WebhookPayload;
    } catch (error) {
      failure = error;
    }
  }
  throw failure;
}

type Schemas = components['schemas'];

/**
 * An account event as a registered endpoint receives it (docs/webhooks.md#account-events):
 * `{ id, type, createdAt, mode, data }`, one member per catalog type — narrow on `type` to get
 * that type's `data`.
 */
export type SibylEvent =
  | Schemas['ResolutionCompletedEvent']
  | Schemas['ResolutionFailedEvent']
  | Schemas['JobCompletedEvent']
  | Schemas['JobFailedEvent']
  | Schemas['DepositCreditedEvent']
  | Schemas['BalanceLowEvent']
  | Schemas['BalanceDepletedEvent']
  | Schemas['KeyExpiringEvent']
  | Schemas['EndpointDisabledEvent'];

/** The catalog's type names. */
export type SibylEventType = SibylEvent['type'];

/** The event of one type: `SibylEventOf<'balance.low'>`. */
export type SibylEventOf<T extends SibylEventType> = Extract<SibylEvent, { type: T }>;

/**
 * For a registered endpoint's receiver: checks an account event on its raw body and headers with
 * the endpoint's secret (or `[newest, previous]` during a rotation), as `verifyWebhook` does, and
 * returns it typed. Throws when it does not verify.
 */
export function verifyEvent(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string | readonly string[],
): SibylEvent {
  return verifyWebhook(rawBody, headers, secret) as unknown as SibylEvent;
}
