import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClaimedDelivery } from '../../src/webhooks/delivery.js';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS } from '../../src/webhooks/outbox.js';
import * as sql from '../../src/webhooks/sql.js';
import type { TestAccount, TestContext } from '../helpers/context.js';
import { type DeliveryFixture, deliveryFixture } from './delivery-fixture.js';

/**
 * Bounded work for deliveries (docs/operations.md#bounded-work): every claim counts an attempt whether or not its worker
 * survives. A worker "lost" here is one that claimed and never recorded anything — exactly what a
 * SIGKILL mid-attempt leaves behind (test/webhooks/processes.test.ts does it with real processes).
 */

const LEASE_MS = 30_000;
let fx: DeliveryFixture;
let ctx: TestContext;
let handler: DeliveryFixture['handler'];
let sent: DeliveryFixture['sent'];

beforeAll(async () => {
  fx = await deliveryFixture({ leaseMs: LEASE_MS, answer: 200 });
  ({ ctx, handler, sent } = fx);
});
afterAll(async () => {
  await ctx.close();
});

const enqueue = (account: TestAccount, path: string) => fx.enqueue(account, path);

/** What a worker that dies mid-attempt does: claims, and records nothing. */
async function claimAndDie(id: string): Promise<ClaimedDelivery | undefined> {
  const claimed = await handler.claim(100, ctx.clock.now());
  return claimed.find((d) => d.id === id);
}

/** What a live worker does: claims, and attempts every claimed delivery. */
async function claimAndSend(): Promise<number> {
  const claimed = await handler.claim(100, ctx.clock.now());
  for (const delivery of claimed) await handler.process(delivery);
  return claimed.length;
}

async function row(id: string) {
  const [found] = await ctx.database.db.query<{
    status: string;
    attempts: number;
    due_at: Date | null;
    last_error: string | null;
    finished_at: Date | null;
  }>('SELECT status, attempts, due_at, last_error, finished_at FROM webhook_deliveries WHERE id = $1', [id]);
  return found;
}

async function view(account: TestAccount, id: string) {
  const response = await ctx.request(account.key, {
    method: 'GET',
    url: `/api/v1/webhooks/deliveries/${id}`,
  });
  expect(response.statusCode).toBe(200);
  return response.json();
}

describe('a delivery whose worker is lost on every attempt', () => {
  it(`counts each claim; after the ${MAX_ATTEMPTS}th it is CALLBACK_FAILED (abandoned) and never claimed again`, async () => {
    ctx.clock.set('2026-03-01T00:00:00Z');
    const account = await ctx.createAccount();
    const id = await enqueue(account, '/killer');
    const begun: Date[] = [];
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      begun.push(ctx.clock.now());
      const claimed = await claimAndDie(id);
      expect(claimed?.attempts).toBe(attempt); // counted by the claim itself
      expect(await row(id)).toMatchObject({ status: 'SENDING', attempts: attempt });
      ctx.clock.advance(LEASE_MS - 1);
      expect(await claimAndDie(id)).toBeUndefined(); // the lease still holds
      ctx.clock.advance(1);
      // The lease lapsed: the next claim settles the lost attempt as a failed one.
      expect(await claimAndDie(id)).toBeUndefined();
      if (attempt === MAX_ATTEMPTS) break;
      // The next attempt is due on the retry schedule, counted from when the loss was noticed.
      expect(await row(id)).toMatchObject({
        status: 'PENDING',
        attempts: attempt,
        due_at: new Date(ctx.clock.now().getTime() + (RETRY_DELAYS_MS[attempt - 1] as number)),
        last_error: sql.ABANDONED_ERROR,
      });
      ctx.clock.advance(RETRY_DELAYS_MS[attempt - 1] as number);
    }
    expect(await row(id)).toMatchObject({
      status: 'CALLBACK_FAILED',
      attempts: MAX_ATTEMPTS,
      due_at: null,
      last_error: sql.ABANDONED_ERROR,
      finished_at: ctx.clock.now(),
    });
    expect(sql.ABANDONED_ERROR).toMatch(/^abandoned: /);
    ctx.clock.advance(1000 * 3600_000);
    expect(await claimAndDie(id)).toBeUndefined();
    expect(await row(id)).toMatchObject({ status: 'CALLBACK_FAILED', attempts: MAX_ATTEMPTS });

    // Every lost attempt is listed, with the time it began.
    const shown = await view(account, id);
    expect(shown).toMatchObject({
      status: 'CALLBACK_FAILED',
      attemptCount: MAX_ATTEMPTS,
      nextAttemptAt: null,
      lastStatusCode: null,
      lastError: sql.ABANDONED_ERROR,
    });
    expect(shown.attempts).toEqual(
      begun.map((at, i) => ({
        attempt: i + 1,
        at: at.toISOString(),
        statusCode: null,
        error: sql.ABANDONED_ERROR,
        latencyMs: LEASE_MS,
      })),
    );
  });

  it('a lost attempt is a failed one: the next attempt is sent on the schedule and can succeed', async () => {
    ctx.clock.set('2026-03-02T00:00:00Z');
    const account = await ctx.createAccount();
    const id = await enqueue(account, '/recovers');
    await claimAndDie(id);
    ctx.clock.advance(LEASE_MS);
    expect(await claimAndSend()).toBe(0); // settles attempt 1; attempt 2 is due in 5 s
    ctx.clock.advance((RETRY_DELAYS_MS[0] as number) - 1);
    expect(await claimAndSend()).toBe(0);
    ctx.clock.advance(1);
    fx.answer = 200;
    const before = sent.length;
    expect(await claimAndSend()).toBe(1);
    expect(sent.slice(before).map((r) => r.headers['webhook-id'])).toEqual([id]);
    expect(await row(id)).toMatchObject({ status: 'DELIVERED', attempts: 2 });
    const shown = await view(account, id);
    expect(
      shown.attempts.map((a: { attempt: number; error: string | null }) => [a.attempt, a.error]),
    ).toEqual([
      [1, sql.ABANDONED_ERROR],
      [2, null],
    ]);
  });

  it('a redelivery is one new attempt, counted the same way: lost again, it ends abandoned again', async () => {
    ctx.clock.set('2026-03-03T00:00:00Z');
    const account = await ctx.createAccount();
    const id = await enqueue(account, '/redelivered');
    fx.answer = 410;
    expect(await claimAndSend()).toBe(1);
    expect(await row(id)).toMatchObject({ status: 'STOPPED', attempts: 1 });

    const redeliver = () =>
      ctx.request(account.key, { method: 'POST', url: `/api/v1/webhooks/deliveries/${id}/redeliver` });
    expect((await redeliver()).statusCode).toBe(200);
    expect((await claimAndDie(id))?.attempts).toBe(2);
    ctx.clock.advance(LEASE_MS);
    expect(await claimAndSend()).toBe(0);
    expect(await row(id)).toMatchObject({
      status: 'CALLBACK_FAILED',
      attempts: 2,
      last_error: sql.ABANDONED_ERROR,
    });
    ctx.clock.advance(100 * 3600_000);
    expect(await claimAndSend()).toBe(0);

    // Redelivered again, and this time the attempt is made: it is attempt 3.
    expect((await redeliver()).statusCode).toBe(200);
    fx.answer = 200;
    expect(await claimAndSend()).toBe(1);
    expect(await row(id)).toMatchObject({ status: 'DELIVERED', attempts: 3 });
  });

  it('a test event whose sending process died is ended CALLBACK_FAILED (abandoned) by a worker, not sent', async () => {
    ctx.clock.set('2026-03-04T00:00:00Z');
    const account = await ctx.createAccount();
    const id = 'msg_testEventWhoseProcessDied00';
    // What POST /webhooks/test writes before it sends; the process then "dies".
    await ctx.database.db.query(sql.INSERT_TEST, [
      id,
      account.accountId,
      'https://hooks.example.com/test',
      'req_test_died',
      '{}',
      ctx.clock.now(),
      new Date(ctx.clock.now().getTime() + LEASE_MS),
      'lease-of-the-dead-process',
    ]);
    expect(await row(id)).toMatchObject({ status: 'SENDING', attempts: 1 });
    const before = sent.length;
    ctx.clock.advance(LEASE_MS);
    expect(await claimAndSend()).toBe(0);
    expect(sent.length).toBe(before);
    expect(await row(id)).toMatchObject({
      status: 'CALLBACK_FAILED',
      attempts: 1,
      last_error: sql.ABANDONED_ERROR,
    });
  });
});
