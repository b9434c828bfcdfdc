import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { webhookOutbox } from '../../src/webhooks/outbox.js';
import type { WebhookTransport } from '../../src/webhooks/transport-port.js';
import { createTestContext, type TestAccount, type TestContext, testConfig } from '../helpers/context.js';
import { DASHBOARD_TEST_CONFIG, DashboardClient } from '../helpers/dashboard.js';
import { balanceOf } from '../helpers/ledger.js';
import { REDIS_URL, redisReachable } from '../helpers/redis.js';

/**
 * POST /webhooks/test is free and writes a delivery row per call, so it has a small limit of its
 * own per account (WEBHOOK_TEST_LIMIT_PER_MINUTE, default 10): past it, 429 RATE_LIMIT_EXCEEDED with
 * Retry-After, nothing sent, nothing written.
 */

let sent = 0;
const transport: WebhookTransport = {
  async send() {
    sent += 1;
    return { kind: 'response', statusCode: 200, latencyMs: 1, bodyPreview: '' };
  },
  close: async () => {},
};

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext({ app: { webhookTransport: transport } });
});
afterAll(async () => {
  await ctx.close();
});

function sendTest(account: TestAccount) {
  return ctx.request(account.key, {
    method: 'POST',
    url: '/api/v1/webhooks/test',
    payload: { callbackUrl: 'https://hooks.example.com/test' },
  });
}

async function testDeliveries(accountId: string): Promise<number> {
  const [row] = await ctx.database.db.query<{ n: bigint }>(
    `SELECT count(*) AS n FROM webhook_deliveries WHERE account_id = $1 AND type = 'test'`,
    [accountId],
  );
  return Number(row?.n ?? 0);
}

describe('POST /webhooks/test has its own limit', () => {
  it('10 at once per account, then 429 with Retry-After; nothing sent or written; one back every 6 s', async () => {
    ctx.clock.set('2026-04-01T00:00:00Z');
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const other = await ctx.createAccount();
    for (let i = 0; i < 10; i++) expect((await sendTest(account)).statusCode).toBe(200);
    const before = sent;

    const refused = await sendTest(account);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('6');
    expect(refused.json()).toEqual({
      error: 'Limit of 10 test webhooks a minute per account exceeded; retry in 6 s',
      code: 'RATE_LIMIT_EXCEEDED',
      details: { limit: 10, retryAfterSeconds: 6 },
      requestId: refused.headers['x-request-id'],
    });
    expect(sent).toBe(before);
    expect(await testDeliveries(account.accountId)).toBe(10);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(1_000_000n);

    // Another key of the same account shares the limit; another account has its own.
    const second = await ctx.addKey(account.accountId);
    expect((await sendTest({ ...account, key: second.key })).statusCode).toBe(429);
    expect((await sendTest(other)).statusCode).toBe(200);

    // The bucket refills at 10 a minute: one more every 6 seconds.
    ctx.clock.advance(5999);
    expect((await sendTest(account)).statusCode).toBe(429);
    ctx.clock.advance(1);
    expect((await sendTest(account)).statusCode).toBe(200);
    expect((await sendTest(account)).statusCode).toBe(429);
    expect(await testDeliveries(account.accountId)).toBe(11);
  });

  it('bad input is refused before the limit is touched', async () => {
    const account = await ctx.createAccount();
    for (let i = 0; i < 15; i++) {
      const response = await ctx.request(account.key, {
        method: 'POST',
        url: '/api/v1/webhooks/test',
        payload: { callbackUrl: 'http://hooks.example.com/' },
      });
      expect(response.statusCode).toBe(400);
    }
    for (let i = 0; i < 10; i++) expect((await sendTest(account)).statusCode).toBe(200);
    expect((await sendTest(account)).statusCode).toBe(429);
  });

  it('WEBHOOK_TEST_LIMIT_PER_MINUTE sets it; API instances sharing Redis share it', async () => {
    const shared = await redisReachable(REDIS_URL);
    const config = { WEBHOOK_TEST_LIMIT_PER_MINUTE: '3', REDIS_URL };
    const one = await createTestContext({ config, app: { webhookTransport: transport } });
    const two = await buildApp({
      config: testConfig(config),
      db: one.database.db,
      clock: one.clock,
      callbacks: webhookOutbox,
      webhookTransport: transport,
    });
    await two.ready();
    try {
      const { key } = await one.createAccount();
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const response = await (i % 2 ? two : one.app).inject({
          method: 'POST',
          url: '/api/v1/webhooks/test',
          headers: { authorization: `Bearer ${key}` },
          payload: { callbackUrl: 'https://hooks.example.com/test' },
        });
        statuses.push(response.statusCode);
      }
      // Shared through Redis: 3 in all. Without Redis each instance keeps its own bucket of 3.
      expect(statuses).toEqual(shared ? [200, 200, 200, 429, 429, 429] : [200, 200, 200, 200, 200, 200]);
    } finally {
      await two.close();
      await one.close();
    }
  });
});

describe('the dashboard’s twin of POST /webhooks/test', () => {
  it('answers 429 past the same limit, and its OpenAPI responses say so', async () => {
    const dash = await createTestContext({
      config: DASHBOARD_TEST_CONFIG,
      app: { webhookTransport: transport },
    });
    try {
      dash.clock.set('2026-04-01T00:00:00Z');
      const alice = await DashboardClient.listening(dash.app);
      await alice.signIn();
      const call = () =>
        alice.call('POST', '/dashboard/api/sandbox/webhooks/test', {
          body: { callbackUrl: 'https://hooks.example.com/test' },
        });
      for (let i = 0; i < 10; i++) expect((await call()).status).toBe(200);
      const refused = await call();
      expect(refused.status).toBe(429);
      expect(refused.body.code).toBe('RATE_LIMIT_EXCEEDED');
      const doc = (await dash.request(null, { method: 'GET', url: '/api/v1/openapi.json' })).json();
      const twin = doc.paths['/dashboard/api/{mode}/webhooks/test'].post.responses['429'];
      expect(twin?.content['application/json'].schema.properties.code.enum).toEqual(['RATE_LIMIT_EXCEEDED']);
    } finally {
      await dash.close();
    }
  });
});
