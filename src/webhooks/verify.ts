import { timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { serviceSignature } from './signing.js';

/**
 * For receivers: checks a callback on its raw body — the Standard Webhooks signature and timestamp
 * (within 5 minutes) and the `X-Service-Signature` of the body without its `signature` field —
 * and returns the parsed payload. Throws when anything does not match. The tests' receiver check;
 * receivers use `verifyWebhook` of `@sibyl/client` (client/src/webhooks.ts).
 */
export function verifyWebhook(
  rawBody: string | Buffer,
  headers: Record<string, string | string[] | undefined>,
  secret: string,
): Record<string, unknown> {
  const body = typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8');
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(' ') : value;
  }
  const payload = new Webhook(secret).verify(body, flat) as Record<string, unknown>;
  const cut = body.lastIndexOf(',"signature":"');
  const claimed = flat['x-service-signature'];
  if (cut < 0 || claimed === undefined) throw new Error('no service signature');
  const expected = serviceSignature(`${body.slice(0, cut)}}`, secret);
  if (!sameHex(claimed, expected) || payload.signature !== claimed)
    throw new Error('service signature mismatch');
  return payload;
}

function sameHex(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
