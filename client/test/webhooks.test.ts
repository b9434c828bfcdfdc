import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordAccountEvent } from '../../src/webhooks/events.js';
import { signedRequest } from '../../src/webhooks/signing.js';
import type { TestContext } from '../../test/helpers/context.js';
import { createSibylClient, type SibylEvent, unwrap, verifyEvent, verifyWebhook } from '../src/index.js';
import { startService } from './helpers.js';

// The receiver's check against what the service signs (its own signing code), with the account's
// real secret from the API.
let ctx: TestContext;
let secret: string;

beforeAll(async () => {
  let baseUrl: string;
  ({ ctx, baseUrl } = await startService());
  const account = await ctx.createAccount();
  const sibyl = createSibylClient({ baseUrl, apiKey: account.key });
  secret = (await unwrap(sibyl.GET('/api/v1/account/webhook-secret'))).webhookSecret;
});
afterAll(async () => {
  await ctx.close();
});

const payload = JSON.stringify({
  requestId: 'req_client',
  type: 'price',
  status: 'completed',
  data: { vwapPrice: 1.5 },
  timestamp: '2026-11-23T09:00:00.000Z',
});
const otherSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

describe('verifyWebhook', () => {
  it('returns the payload of a callback the service signed, from Node or fetch headers, string or bytes', () => {
    const { body, headers } = signedRequest('msg_client', payload, [secret], new Date());
    const parsed = verifyWebhook(body, headers, secret);
    expect(parsed).toMatchObject({ requestId: 'req_client', type: 'price', data: { vwapPrice: 1.5 } });
    expect(parsed.signature).toBe(headers['x-service-signature']);
    expect(verifyWebhook(new TextEncoder().encode(body), new Headers(headers), secret)).toEqual(parsed);
    const shouted = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect(verifyWebhook(body, shouted, secret)).toEqual(parsed);
  });

  it('refuses a changed body, another secret, a missing signature and a stale timestamp', () => {
    const { body, headers } = signedRequest('msg_client', payload, [secret], new Date());
    expect(() => verifyWebhook(body.replace('1.5', '2.5'), headers, secret)).toThrow();
    expect(() => verifyWebhook(body, headers, otherSecret())).toThrow();
    expect(() => verifyWebhook(body, { ...headers, 'webhook-signature': undefined }, secret)).toThrow();
    const old = signedRequest('msg_client', payload, [secret], new Date(Date.now() - 6 * 60_000));
    expect(() => verifyWebhook(old.body, old.headers, secret)).toThrow();
    expect(() => verifyWebhook(body, headers, [])).toThrow('no secret');
  });

  it('verifies with either secret during a rotation, and with a list of both', () => {
    const newest = otherSecret();
    const { body, headers } = signedRequest('msg_rotated', payload, [newest, secret], new Date());
    expect(headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(verifyWebhook(body, headers, newest)).toMatchObject({ requestId: 'req_client' });
    expect(verifyWebhook(body, headers, secret)).toMatchObject({ requestId: 'req_client' });
    expect(verifyWebhook(body, headers, [otherSecret(), secret])).toMatchObject({ requestId: 'req_client' });
    expect(() => verifyWebhook(body, headers, [otherSecret(), otherSecret()])).toThrow();
  });
});

describe('verifyEvent', () => {
  it('returns an account event typed by its type: narrowing on type gives that type’s data', async () => {
    const account = await ctx.createAccount();
    const created = await ctx.request(account.key, {
      method: 'POST',
      url: '/api/v1/webhooks/endpoints',
      payload: { url: 'https://example.com/hook', eventTypes: ['balance.low'] },
    });
    const endpoint = created.json() as { id: string; secret: string };
    const event = await ctx.database.db.transaction((tx) =>
      recordAccountEvent(tx, {
        accountId: account.accountId,
        mode: 'sandbox',
        type: 'balance.low',
        data: { thresholdUsd: '5.00', balanceUsd: '4.99', accountId: account.accountId },
        at: new Date(),
      }),
    );
    const [row] = await ctx.database.db.query<{ id: string; payload: string }>(
      'SELECT id, payload FROM webhook_deliveries WHERE event_id = $1',
      [event?.id],
    );
    const { body, headers } = signedRequest(
      row?.id as string,
      row?.payload as string,
      [endpoint.secret],
      new Date(),
      {
        bodySignature: false,
      },
    );
    const received: SibylEvent = verifyEvent(body, headers, endpoint.secret);
    if (received.type !== 'balance.low') throw new Error(`unexpected ${received.type}`);
    // Typed: `thresholdUsd` exists only on balance.low's data.
    const threshold: string = received.data.thresholdUsd;
    expect(threshold).toBe('5.00');
    expect(received).toMatchObject({ id: event?.id, mode: 'sandbox', data: { balanceUsd: '4.99' } });
    expect(() => verifyEvent(body, headers, otherSecret())).toThrow();
  });
});
