import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliOn } from '../helpers/cli.js';
import type { TestAccount, TestContext } from '../helpers/context.js';
import { type DeliveryFixture, deliveryFixture } from './delivery-fixture.js';

/**
 * POST /webhooks/deliveries/:id/cancel (docs/webhooks.md#cancelling-a-delivery): a
 * pending delivery stops for good; an attempt in flight is its last; a finished one is 409.
 */

const LEASE_MS = 30_000;
let fx: DeliveryFixture;
let ctx: TestContext;
let handler: DeliveryFixture['handler'];
let sent: DeliveryFixture['sent'];

beforeAll(async () => {
  fx = await deliveryFixture({ leaseMs: LEASE_MS, answer: 500 });
  ({ ctx, handler, sent } = fx);
});
afterAll(async () => {
  await ctx.close();
});

const enqueue = (account: TestAccount, path: string) => fx.enqueue(account, path);

const sentTo = (id: string) => sent.filter((r) => r.headers['webhook-id'] === id).length;

async function claimAndSend(): Promise<number> {
  const claimed = await handler.claim(100, ctx.clock.now());
  for (const delivery of claimed) await handler.process(delivery);
  return claimed.length;
}

function cancel(account: TestAccount, id: string) {
  return ctx.request(account.key, { method: 'POST', url: `/api/v1/webhooks/deliveries/${id}/cancel` });
}

/** Every attempt that could ever come: the clock past the longest retry delay, claimed until none. */
async function runOutTheSchedule(): Promise<void> {
  for (let i = 0; i < 10; i++) {
    ctx.clock.advance(11 * 60 * 60 * 1000);
    await claimAndSend();
  }
}

describe('cancelling a delivery', () => {
  it('a pending delivery is CANCELLED at once and never sent again; finished ones are 409; others 404', async () => {
    ctx.clock.set(new Date('2026-11-26T00:00:00Z'));
    fx.answer = 500;
    const account = await ctx.createAccount();
    const other = await ctx.createAccount();
    const id = await enqueue(account, '/mistyped');
    expect(await claimAndSend()).toBe(1); // the first attempt fails: PENDING, due in 5 s
    expect(sentTo(id)).toBe(1);

    const foreign = await cancel(other, id);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().code).toBe('NOT_FOUND');
    expect((await cancel(account, 'msg_nope')).statusCode).toBe(404);

    const cancelled = await cancel(account, id);
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json()).toMatchObject({
      id,
      status: 'CANCELLED',
      nextAttemptAt: null,
      finishedAt: ctx.clock.now().toISOString(),
      cancelledAt: ctx.clock.now().toISOString(),
      attemptCount: 1,
      requestId: cancelled.headers['x-request-id'],
      originalRequestId: 'req_mistyped',
    });
    await runOutTheSchedule();
    expect(sentTo(id)).toBe(1);

    const again = await cancel(account, id);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({
      code: 'DELIVERY_CANNOT_CANCEL',
      details: { status: 'CANCELLED' },
    });
    const listed = await ctx.request(account.key, {
      method: 'GET',
      url: '/api/v1/webhooks/deliveries?status=CANCELLED',
    });
    expect(listed.json().deliveries.map((d: { id: string }) => d.id)).toEqual([id]);

    fx.answer = 200;
    const delivered = await enqueue(account, '/fine');
    await claimAndSend();
    const late = await cancel(account, delivered);
    expect(late.statusCode).toBe(409);
    expect(late.json()).toMatchObject({ code: 'DELIVERY_CANNOT_CANCEL', details: { status: 'DELIVERED' } });
    expect(late.json().error).toContain('already DELIVERED');
  });

  it('an attempt in flight is the last: it ends the delivery CANCELLED, or DELIVERED if it was answered 2xx', async () => {
    const account = await ctx.createAccount();
    for (const [path, code, final] of [
      ['/inflight-fails', 500, 'CANCELLED'],
      ['/inflight-delivers', 200, 'DELIVERED'],
    ] as const) {
      fx.answer = code;
      const id = await enqueue(account, path);
      // A worker claims it (SENDING, the attempt counted) and has not recorded an answer yet…
      const [claimed] = (await handler.claim(100, ctx.clock.now())).filter((d) => d.id === id);
      expect(claimed).toBeDefined();
      if (!claimed) return;
      // …when its account cancels it.
      const response = await cancel(account, id);
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({
        status: 'SENDING',
        cancelledAt: ctx.clock.now().toISOString(),
      });
      await handler.process(claimed);
      const view = await ctx.request(account.key, {
        method: 'GET',
        url: `/api/v1/webhooks/deliveries/${id}`,
      });
      expect(view.json()).toMatchObject({ status: final, nextAttemptAt: null, attemptCount: 1 });
      expect(view.json().attempts).toHaveLength(1);
      await runOutTheSchedule();
      expect(sentTo(id)).toBe(1);
    }
  });

  it('cancelled while its worker is lost: when the lease lapses it ends CANCELLED, not retried', async () => {
    fx.answer = 500;
    const account = await ctx.createAccount();
    const id = await enqueue(account, '/lost');
    const [claimed] = (await handler.claim(100, ctx.clock.now())).filter((d) => d.id === id);
    expect(claimed).toBeDefined();
    expect((await cancel(account, id)).statusCode).toBe(200);
    ctx.clock.advance(LEASE_MS + 1000);
    await runOutTheSchedule();
    expect(sentTo(id)).toBe(0);
    const view = await ctx.request(account.key, { method: 'GET', url: `/api/v1/webhooks/deliveries/${id}` });
    expect(view.json()).toMatchObject({ status: 'CANCELLED', attemptCount: 1 });
    expect(view.json().attempts[0].error).toMatch(/^abandoned/);
  });

  it('claims and cancels racing: a delivery answered CANCELLED is never sent; one claimed first is sent once, then ends', async () => {
    fx.answer = 500;
    const account = await ctx.createAccount();
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await enqueue(account, `/race-${i}`));
    // One claim and twelve cancels at once (truly concurrent on PostgreSQL; PGlite runs them in turn).
    const [claimed, ...answers] = await Promise.all([
      handler.claim(100, ctx.clock.now()),
      ...ids.map((id) => cancel(account, id)),
    ]);
    const claimedIds = new Set(claimed.filter((d) => ids.includes(d.id)).map((d) => d.id));
    for (const [i, response] of answers.entries()) {
      expect(response.statusCode).toBe(200);
      const status = response.json().status;
      // Cancelled before the claim (never sent), or after it (the attempt in flight is the last).
      expect(status).toBe(claimedIds.has(ids[i] as string) ? 'SENDING' : 'CANCELLED');
    }
    for (const delivery of claimed) await handler.process(delivery);
    await runOutTheSchedule();
    for (const id of ids) {
      expect(sentTo(id)).toBe(claimedIds.has(id) ? 1 : 0);
      const view = await ctx.request(account.key, {
        method: 'GET',
        url: `/api/v1/webhooks/deliveries/${id}`,
      });
      expect(view.json().status).toBe('CANCELLED');
    }
  });

  it('a redelivery withdraws a cancellation: one new attempt', async () => {
    fx.answer = 500;
    const account = await ctx.createAccount();
    const id = await enqueue(account, '/change-of-mind');
    await cancel(account, id);
    fx.answer = 200;
    const redelivered = await ctx.request(account.key, {
      method: 'POST',
      url: `/api/v1/webhooks/deliveries/${id}/redeliver`,
    });
    expect(redelivered.json()).toMatchObject({ status: 'PENDING', cancelledAt: null });
    await claimAndSend();
    expect(sentTo(id)).toBe(1);
  });

  it('sibyl webhooks cancel DELIVERY_ID', async () => {
    fx.answer = 500;
    const account = await ctx.createAccount();
    const id = await enqueue(account, '/cli');
    const out = await runCliOn(ctx.database.db, ['webhooks', 'cancel', id, '--json'], {});
    expect(out.status).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({ id, status: 'CANCELLED' });
    const twice = await runCliOn(ctx.database.db, ['webhooks', 'cancel', id, '--json'], {});
    expect(twice.status).toBe(1);
    expect(JSON.parse(twice.stdout)).toMatchObject({
      code: 'DELIVERY_CANNOT_CANCEL',
      details: { status: 'CANCELLED' },
    });
    const text = await runCliOn(ctx.database.db, ['webhooks', 'cancel', 'msg_nope'], {});
    expect(text.status).toBe(1);
    expect(text.stderr).toContain('msg_nope');
    await runOutTheSchedule();
    expect(sentTo(id)).toBe(0);
  });
});
