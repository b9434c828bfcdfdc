import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext, withTransaction } from '../../src/context.js';
import { silentLog } from '../../src/logger.js';
import { registry } from '../../src/metrics/metrics.js';
import { WorkQueue } from '../../src/queue/queue.js';
import { deliveryQueueHandler } from '../../src/webhooks/delivery.js';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS, webhookOutbox } from '../../src/webhooks/outbox.js';
import { clearSecretBox } from '../../src/webhooks/secret-box.js';
import type { WebhookTransport } from '../../src/webhooks/transport-port.js';
import { verifyWebhook } from '../../src/webhooks/verify.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { type HttpsReceiver, loopbackTransport, startHttpsReceiver } from '../helpers/https-receiver.js';
import { balanceOf } from '../helpers/ledger.js';

let ctx: TestContext;
let receiver: HttpsReceiver;
let transport: WebhookTransport;
let queue: WorkQueue<unknown>;

beforeAll(async () => {
  receiver = await startHttpsReceiver();
  transport = await loopbackTransport();
  ctx = await createTestContext({ app: { webhookTransport: transport } });
  queue = new WorkQueue(
    deliveryQueueHandler({
      db: ctx.database.db,
      clock: ctx.clock,
      log: silentLog,
      transport,
      secrets: clearSecretBox,
      settings: { concurrency: 10, leaseMs: 30_000 },
    }),
    { db: ctx.database.db, clock: ctx.clock, log: silentLog },
  ) as WorkQueue<unknown>;
});
afterAll(async () => {
  await ctx.close();
  await transport.close();
  await receiver.close();
});

async function secretOf(account: TestAccount): Promise<string> {
  const response = await ctx.request(account.key, { method: 'GET', url: '/api/v1/account' });
  return response.json().webhookSecret;
}

async function enqueue(
  account: TestAccount,
  path: string,
  data: unknown = { outcome: 'Yes' },
): Promise<string> {
  const context = createContext(ctx.database.db, ctx.clock);
  return withTransaction(context, (tx) =>
    webhookOutbox.enqueueCallback(tx, {
      accountId: account.accountId,
      url: `${receiver.url}${path}`,
      type: 'ai',
      status: 'completed',
      requestId: `req_${path.slice(1)}`,
      data,
    }),
  );
}

/** `sibyl_webhook_attempts_total` by outcome, as this process counted them so far. */
async function attemptCounts(): Promise<Record<string, number>> {
  const metric = registry.getSingleMetric('sibyl_webhook_attempts_total');
  const { values } = await (metric as NonNullable<typeof metric>).get();
  return Object.fromEntries(values.map((v) => [String(v.labels.outcome), v.value]));
}

const counted = (before: Record<string, number>, after: Record<string, number>) =>
  Object.fromEntries(
    Object.entries(after)
      .map(([outcome, n]) => [outcome, n - (before[outcome] ?? 0)])
      .filter(([, n]) => n !== 0),
  );

const receivedAt = (path: string) => receiver.received.filter((r) => r.url === path);

async function delivery(id: string) {
  const [row] = await ctx.database.db.query<{ status: string; attempts: number; due_at: Date | null }>(
    'SELECT status, attempts, due_at FROM webhook_deliveries WHERE id = $1',
    [id],
  );
  return row;
}

describe('delivering a callback', () => {
  it('arrives signed: Standard Webhooks headers, X-Service-Signature, and `signature` as the last field', async () => {
    ctx.clock.set(new Date());
    const account = await ctx.createAccount();
    const secret = await secretOf(account);
    receiver.setHandler(() => 200);
    const id = await enqueue(account, '/signed', { outcome: 'Yes', note: 'quotes " and unicode é' });
    await queue.drain();

    const [got] = receivedAt('/signed');
    expect(got).toBeDefined();
    if (!got) return;
    const headers = got.headers as Record<string, string>;
    expect(headers['webhook-id']).toBe(id);
    // The Standard Webhooks library verifies the raw body as sent.
    const parsed = new Webhook(secret).verify(got.body, headers) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual(['requestId', 'type', 'status', 'data', 'timestamp', 'signature']);
    expect(parsed).toMatchObject({ requestId: 'req_signed', type: 'ai', status: 'completed' });
    // The plain-crypto recipe of docs/webhooks.md: cut `,"signature":"…"` off the raw body, HMAC the rest.
    const cut = got.body.lastIndexOf(',"signature":"');
    const signed = `${got.body.slice(0, cut)}}`;
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const expected = createHmac('sha256', key).update(signed).digest('hex');
    expect(headers['x-service-signature']).toBe(expected);
    expect(parsed.signature).toBe(expected);
    expect(verifyWebhook(got.body, headers, secret)).toMatchObject({ requestId: 'req_signed' });
    // Tampering with the body, the id or the timestamp fails verification.
    expect(() => verifyWebhook(got.body.replace('Yes', 'No'), headers, secret)).toThrow();
    expect(() => new Webhook(secret).verify(got.body, { ...headers, 'webhook-id': 'msg_other' })).toThrow();
    expect(() => new Webhook(secret).verify(got.body, { ...headers, 'webhook-timestamp': '1' })).toThrow();
    expect(await delivery(id)).toMatchObject({ status: 'DELIVERED', attempts: 1 });
  });

  it('a callback written in a transaction that rolls back is never sent', async () => {
    const account = await ctx.createAccount();
    const context = createContext(ctx.database.db, ctx.clock);
    await expect(
      withTransaction(context, async (tx) => {
        await webhookOutbox.enqueueCallback(tx, {
          accountId: account.accountId,
          url: `${receiver.url}/rolled-back`,
          type: 'price',
          status: 'completed',
          requestId: 'req_rb',
          data: {},
        });
        throw new Error('the result failed to commit');
      }),
    ).rejects.toThrow();
    await queue.drain();
    expect(receivedAt('/rolled-back')).toEqual([]);
  });

  it('follows the retry schedule on 500 (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), then CALLBACK_FAILED', async () => {
    const account = await ctx.createAccount();
    receiver.setHandler(() => 500);
    const id = await enqueue(account, '/always-500');
    const before = await attemptCounts();
    expect(await queue.drain()).toBe(1);
    for (const delay of RETRY_DELAYS_MS) {
      ctx.clock.advance(delay - 1);
      expect(await queue.drain()).toBe(0); // not a millisecond early
      ctx.clock.advance(1);
      expect(await queue.drain()).toBe(1);
    }
    expect(receivedAt('/always-500')).toHaveLength(MAX_ATTEMPTS);
    expect(await delivery(id)).toMatchObject({ status: 'CALLBACK_FAILED', attempts: 8, due_at: null });
    // The metric an operator alerts on (deploy/prometheus/alerts.yml).
    expect(counted(before, await attemptCounts())).toEqual({ retrying: 7, callback_failed: 1 });
    ctx.clock.advance(100 * 3600_000);
    expect(await queue.drain()).toBe(0);
    // Every attempt carries the same webhook-id.
    expect(new Set(receivedAt('/always-500').map((r) => r.headers['webhook-id']))).toEqual(new Set([id]));

    const view = await ctx.request(account.key, { method: 'GET', url: `/api/v1/webhooks/deliveries/${id}` });
    expect(view.statusCode).toBe(200);
    const attempts = view.json().attempts as { attempt: number; at: string; statusCode: number }[];
    expect(attempts.map((a) => a.statusCode)).toEqual(Array(8).fill(500));
    const gaps = attempts.slice(1).map((a, i) => Date.parse(a.at) - Date.parse(attempts[i]?.at ?? ''));
    expect(gaps).toEqual([...RETRY_DELAYS_MS]);
  });

  it('410 stops at once; a 302 is a failed attempt, not followed; a timeout is retried', async () => {
    const account = await ctx.createAccount();
    receiver.setHandler((req) =>
      req.url === '/gone'
        ? 410
        : req.url === '/moved'
          ? { status: 302, headers: { location: '/gone' } }
          : 'handled',
    );
    const gone = await enqueue(account, '/gone');
    const moved = await enqueue(account, '/moved');
    const slow = await enqueue(account, '/slow');
    const before = await attemptCounts();
    await queue.drain();
    expect(counted(before, await attemptCounts())).toEqual({ stopped: 1, retrying: 2 });
    expect(await delivery(gone)).toMatchObject({ status: 'STOPPED', attempts: 1 });
    expect(await delivery(moved)).toMatchObject({ status: 'PENDING', attempts: 1 });
    expect(await delivery(slow)).toMatchObject({ status: 'PENDING', attempts: 1 });
    expect(receivedAt('/gone')).toHaveLength(1); // the redirect was not followed
    const view = await ctx.request(account.key, {
      method: 'GET',
      url: `/api/v1/webhooks/deliveries/${slow}`,
    });
    expect(view.json().attempts[0]).toMatchObject({
      statusCode: null,
      error: expect.stringMatching(/^timeout/),
    });
    receiver.setHandler(() => 200);
  });
});

describe('integrator endpoints', () => {
  it('POST /webhooks/test sends a signed test event now and answers its outcome; it is listed', async () => {
    ctx.clock.set(new Date());
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const secret = await secretOf(account);
    receiver.setHandler(() => 204);
    const response = await ctx.request(account.key, {
      method: 'POST',
      url: '/api/v1/webhooks/test',
      payload: { callbackUrl: `${receiver.url}/test-event` },
    });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ delivered: true, status: 'DELIVERED', statusCode: 204, error: null });
    const [got] = receivedAt('/test-event');
    expect(got && verifyWebhook(got.body, got.headers as Record<string, string>, secret)).toMatchObject({
      type: 'test',
      requestId: body.requestId,
    });

    const list = await ctx.request(account.key, {
      method: 'GET',
      url: '/api/v1/webhooks/deliveries?status=DELIVERED',
    });
    expect(list.json()).toMatchObject({
      total: 1,
      page: 1,
      pageSize: 50,
      deliveries: [{ id: body.deliveryId, type: 'test' }],
    });
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(1_000_000n); // free

    receiver.setHandler(() => 503);
    const failing = await ctx.request(account.key, {
      method: 'POST',
      url: '/api/v1/webhooks/test',
      payload: { callbackUrl: `${receiver.url}/test-event` },
    });
    expect(failing.json()).toMatchObject({ delivered: false, status: 'CALLBACK_FAILED', statusCode: 503 });
    receiver.setHandler(() => 200);
  });

  it('redeliver sends a finished delivery again with the same webhook-id; other accounts get 404', async () => {
    const account = await ctx.createAccount();
    const other = await ctx.createAccount();
    receiver.setHandler(() => 410);
    const id = await enqueue(account, '/redeliver');
    await queue.drain();
    expect(await delivery(id)).toMatchObject({ status: 'STOPPED' });

    receiver.setHandler(() => 200);
    for (const path of [`/api/v1/webhooks/deliveries/${id}`, `/api/v1/webhooks/deliveries/${id}/redeliver`]) {
      const method = path.endsWith('redeliver') ? 'POST' : 'GET';
      const foreign = await ctx.request(other.key, { method, url: path });
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json().code).toBe('NOT_FOUND');
    }
    const again = await ctx.request(account.key, {
      method: 'POST',
      url: `/api/v1/webhooks/deliveries/${id}/redeliver`,
    });
    expect(again.statusCode).toBe(200);
    // Its own request id, as X-Request-Id says; the delivery's request in originalRequestId.
    expect(again.json()).toMatchObject({
      id,
      status: 'PENDING',
      requestId: again.headers['x-request-id'],
      originalRequestId: 'req_redeliver',
    });
    await queue.drain();
    expect(await delivery(id)).toMatchObject({ status: 'DELIVERED', attempts: 2 });
    expect(receivedAt('/redeliver').map((r) => r.headers['webhook-id'])).toEqual([id, id]);
    await queue.drain();
    expect(receivedAt('/redeliver')).toHaveLength(2); // one new attempt, no more
  });

  it('bad input gets VALIDATION_ERROR (never a 5xx, never a charge); unknown ids 404', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const cases = [
      { method: 'POST', url: '/api/v1/webhooks/test', payload: { callbackUrl: 'http://hooks.example.com/' } },
      {
        method: 'POST',
        url: '/api/v1/webhooks/test',
        payload: { callbackUrl: 'https://u:p@hooks.example.com/' },
      },
      {
        method: 'POST',
        url: '/api/v1/webhooks/test',
        payload: { callbackUrl: `https://h.example.com/${'a'.repeat(2100)}` },
      },
      { method: 'POST', url: '/api/v1/webhooks/test', payload: {} },
      {
        method: 'POST',
        url: '/api/v1/webhooks/test',
        payload: { callbackUrl: 'https://h.example.com/', extra: 1 },
      },
      { method: 'GET', url: '/api/v1/webhooks/deliveries?status=LOST' },
      { method: 'GET', url: '/api/v1/webhooks/deliveries?pageSize=0' },
      { method: 'GET', url: '/api/v1/webhooks/deliveries?pageSize=101' },
    ] as const;
    for (const c of cases) {
      const response = await ctx.request(account.key, c);
      expect(response.statusCode, c.url).toBe(400);
      expect(response.json().code).toBe('VALIDATION_ERROR');
    }
    const unknown = await ctx.request(account.key, {
      method: 'GET',
      url: '/api/v1/webhooks/deliveries/msg_nope',
    });
    expect(unknown.statusCode).toBe(404);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(1_000_000n);
  });

  it('secret rotation: the new secret is returned once, and for 24 hours both secrets sign', async () => {
    ctx.clock.set(new Date());
    const account = await ctx.createAccount();
    const before = await secretOf(account);
    const rotated = await ctx.request(account.key, {
      method: 'POST',
      url: '/api/v1/account/webhook-secret/rotate',
    });
    expect(rotated.statusCode).toBe(200);
    const { webhookSecret: after, previousSecretValidUntil } = rotated.json();
    expect(after).toMatch(/^whsec_/);
    expect(after).not.toBe(before);
    expect(Date.parse(previousSecretValidUntil) - ctx.clock.now().getTime()).toBe(24 * 3600_000);
    expect(await secretOf(account)).toBe(after);

    receiver.setHandler(() => 200);
    await enqueue(account, '/rotated');
    await queue.drain();
    const [got] = receivedAt('/rotated');
    const headers = got?.headers as Record<string, string>;
    expect(headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(() => new Webhook(before).verify(got?.body ?? '', headers)).not.toThrow();
    expect(verifyWebhook(got?.body ?? '', headers, after)).toBeTruthy();

    ctx.clock.advance(24 * 3600_000 + 1);
    await enqueue(account, '/rotated-later');
    await queue.drain();
    const [later] = receivedAt('/rotated-later');
    expect(String(later?.headers['webhook-signature']).split(' ')).toHaveLength(1);
  });
});
