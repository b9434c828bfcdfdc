import { createHmac } from 'node:crypto';

/** The secret prefix of Standard Webhooks: the rest is the base64 of the HMAC key. */
const SECRET_PREFIX = 'whsec_';

export interface CallbackPayload {
  requestId: string;
  type: 'ai' | 'price' | 'test';
  status: 'completed' | 'failed';
  data: unknown;
  /** When the result was recorded (ISO 8601): the same on every attempt. */
  timestamp: string;
}

/** The body as stored in the outbox: every field but `signature`, in the documented order. */
export function serialisePayload(payload: CallbackPayload): string {
  const { requestId, type, status, data, timestamp } = payload;
  return JSON.stringify({ requestId, type, status, data, timestamp });
}

/** Hex HMAC-SHA256 of `bytes` under the secret's key (`whsec_` + base64 key). */
export function serviceSignature(bytes: string, secret: string): string {
  return createHmac('sha256', Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64'))
    .update(bytes)
    .digest('hex');
}

/**
 * The Standard Webhooks signature (`v1,` + base64 HMAC-SHA256 of `id.timestamp.body` under the
 * secret's key), as the reference library's `Webhook.sign` computes it — with Node's HMAC: the
 * library's pure-JavaScript SHA-256 was about a tenth of a worker's CPU per delivery (the fan-out of
 * `npm run bench:webhooks`). test/webhooks/signing.test.ts holds them equal.
 */
export function standardSignature(secret: string, id: string, at: Date, body: string): string {
  const key = Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    'base64',
  );
  const signed = `${id}.${Math.floor(at.getTime() / 1000)}.${body}`;
  return `v1,${createHmac('sha256', key).update(signed).digest('base64')}`;
}

/**
 * The bytes sent: the stored payload with `signature` appended as its last field, so a receiver
 * recovers the signed bytes exactly by cutting `,"signature":"…"` off the raw body.
 */
export function signBody(payload: string, secret: string): { body: string; signature: string } {
  const signature = serviceSignature(payload, secret);
  return { body: `${payload.slice(0, -1)},"signature":"${signature}"}`, signature };
}

/**
 * One attempt's signed request: the body (signed with the current secret) and its headers —
 * `X-Service-Signature`, and the Standard Webhooks headers over the full raw body, with one
 * `v1,…` signature per secret in use (the previous one too, during the 24 hours after a rotation).
 */
export function signedRequest(
  deliveryId: string,
  payload: string,
  secrets: readonly string[],
  at: Date,
  options: { bodySignature?: boolean } = {},
): { body: string; headers: Record<string, string> } {
  const [current] = secrets;
  if (current === undefined) throw new Error('no signing secret');
  // An account event's body is its payload as stored; a callback's carries its `signature` last.
  const { body, signature } =
    options.bodySignature === false
      ? { body: payload, signature: serviceSignature(payload, current) }
      : signBody(payload, current);
  const signatures = secrets.map((secret) => standardSignature(secret, deliveryId, at, body));
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'Sibyl-Webhooks/1',
      'x-service-signature': signature,
      'webhook-id': deliveryId,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signatures.join(' '),
    },
  };
}
