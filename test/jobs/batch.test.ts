import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createResolver } from '../../src/ai/resolver.js';
import { aiJobResolver } from '../../src/jobs/ai.js';
import { jobQueueHandler } from '../../src/jobs/runner.js';
import { silentLog } from '../../src/logger.js';
import { createPriceService } from '../../src/prices/index.js';
import type { PriceService } from '../../src/prices/service.js';
import { WorkQueue } from '../../src/queue/queue.js';
import { webhookOutbox } from '../../src/webhooks/outbox.js';
import type { CallbackOutbox } from '../../src/webhooks/port.js';
import { CALLBACKS_VIEW } from '../helpers/callbacks.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { callbacks } from '../helpers/jobs.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';

/**
 * Price checks claimed together run together: one price read per token, one finishing statement or
 * transaction per token. Each job still completes once, with its own result, refund and callback,
 * and only while its lease holds; one job's failure touches no other job.
 */

let ctx: TestContext;
const HOOK = 'https://hooks.example.com/sibyl';
const UNKNOWN_MINT = '9n4nbM75f5Ui33ZbPYXn59EwSgE8CGsHtAeTH5YFeJ9E';

beforeAll(async () => {
  ctx = await createTestContext();
  await ctx.database.db.exec(CALLBACKS_VIEW);
  ctx.clock.set('2026-11-22T12:00:00.000Z');
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

const at = (ms: number) => new Date(ctx.clock.now().getTime() + ms).toISOString();

/** A queue of scheduled jobs with these prices and this outbox (default: the real ones). */
function jobQueue(options: { prices?: PriceService; outbox?: CallbackOutbox } = {}) {
  const deps = { db: ctx.database.db, clock: ctx.clock, log: silentLog, settings: ctx.config.jobs };
  return new WorkQueue(
    jobQueueHandler({
      ...deps,
      prices: options.prices ?? createPriceService(ctx.config.prices, ctx.clock, []),
      callbacks: options.outbox ?? webhookOutbox,
      ai: aiJobResolver(createResolver(ctx.config.ai, ctx.clock)),
    }),
    deps,
  );
}

/** The real price service, with `price` replaced (the rest inherited). */
function pricesWith(price: PriceService['price']): PriceService {
  return Object.assign(Object.create(createPriceService(ctx.config.prices, ctx.clock, [])), { price });
}

async function scheduleMany(account: TestAccount, symbols: string[], callbackUrl: string | null) {
  const ids: string[] = [];
  for (const symbol of symbols) {
    const response = await ctx.request(account.key, {
      method: 'POST',
      url: '/api/v1/price/scheduled',
      payload: { symbol, scheduledFor: at(1000), ...(callbackUrl ? { callbackUrl } : {}) },
    });
    expect(response.statusCode).toBe(200);
    ids.push(response.json().jobId);
  }
  return ids;
}

async function jobs(ids: string[]) {
  const rows = await ctx.database.db.query<{
    id: string;
    status: string;
    attempts: number;
    result: Record<string, unknown> | null;
    error: { code: string } | null;
    delivery_id: string | null;
  }>(
    'SELECT id, status, attempts, result, error, delivery_id FROM scheduled_jobs WHERE id = ANY($1::text[])',
    [ids],
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => byId.get(id));
}

async function callbacksOf(account: TestAccount) {
  return (await callbacks(ctx.database.db)).filter((c) => c.account_id === account.accountId);
}

describe('price checks claimed together', () => {
  it('read each token once; a job whose price fails alone is FAILED and refunded once, each other COMPLETED with one callback', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const [sol1, sol2, sol3, btc, unknown] = await scheduleMany(
      account,
      ['SOL', 'SOL', 'SOL', 'BTC', UNKNOWN_MINT],
      HOOK,
    );
    const [quiet] = await scheduleMany(account, ['SOL'], null);
    const reads: string[] = [];
    const real = createPriceService(ctx.config.prices, ctx.clock, []);
    const queue = jobQueue({
      prices: pricesWith((target, mode, requested) => {
        reads.push(requested);
        return real.price(target, mode, requested);
      }),
    });
    ctx.clock.advance(1000);
    expect(await queue.drain()).toBe(6);

    expect(reads.sort()).toEqual(['BTC', 'SOL', UNKNOWN_MINT].sort());
    const [s1, s2, s3, b, u, q] = await jobs([sol1, sol2, sol3, btc, unknown, quiet] as string[]);
    for (const done of [s1, s2, s3, b, q]) expect(done).toMatchObject({ status: 'COMPLETED', attempts: 1 });
    expect(u).toMatchObject({ status: 'FAILED', result: null, error: { code: 'SYMBOL_NOT_FOUND' } });
    // One read serves the token's jobs: the same price, computed at the same moment.
    expect(new Set([s1, s2, s3, q].map((job) => job?.result?.vwapPrice)).size).toBe(1);
    expect(s1?.result).toMatchObject({ symbol: 'SOL', resolutionTimestamp: ctx.clock.now().toISOString() });
    expect([s1, s2, s3, q].map((job) => job?.result?.requestId)).toHaveLength(4);
    expect(new Set([s1, s2, s3, q].map((job) => job?.result?.requestId)).size).toBe(4);
    expect(q?.delivery_id).toBeNull();

    // Six charges of 0.05, one refunded, once.
    expect(await countEntries(ctx.database.db, account.accountId, 'refund')).toBe(1);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(750_000n);

    const mine = await callbacksOf(account);
    expect(mine.map((c) => c.data.jobId).sort()).toEqual([sol1, sol2, sol3, btc, unknown].sort());
    for (const [id, row] of [
      [sol1, s1],
      [sol2, s2],
      [sol3, s3],
      [btc, b],
      [unknown, u],
    ] as const) {
      expect(row?.delivery_id).toMatch(/^msg_/);
      const callback = mine.find((c) => c.data.jobId === id);
      expect(callback?.status).toBe(id === unknown ? 'failed' : 'completed');
    }
    expect(mine.find((c) => c.data.jobId === unknown)).toMatchObject({
      type: 'price',
      status: 'failed',
      data: { error: { code: 'SYMBOL_NOT_FOUND' }, refundUsd: '0.05', remainingBalanceUsd: '0.75' },
    });
    expect(mine.find((c) => c.data.jobId === btc)?.data).toMatchObject({
      symbol: 'BTC',
      costUsd: '0.05',
      vwapPrice: b?.result?.vwapPrice,
    });
  });

  it('an unexpected error pricing one token leaves only its jobs to run again after the lease', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const [eth1, eth2, sol] = await scheduleMany(account, ['ETH', 'ETH', 'SOL'], HOOK);
    const real = createPriceService(ctx.config.prices, ctx.clock, []);
    const queue = jobQueue({
      prices: pricesWith(async (target, mode, requested) => {
        if (requested === 'ETH') throw new Error('venue client crashed');
        return real.price(target, mode, requested);
      }),
    });
    ctx.clock.advance(1000);
    expect(await queue.drain()).toBe(3);
    const [e1, e2, s] = await jobs([eth1, eth2, sol] as string[]);
    expect(s).toMatchObject({ status: 'COMPLETED', attempts: 1 });
    expect(e1).toMatchObject({ status: 'PROCESSING', attempts: 1, result: null });
    expect(e2).toMatchObject({ status: 'PROCESSING', attempts: 1, result: null });
    expect((await callbacksOf(account)).map((c) => c.data.jobId)).toEqual([sol]);

    ctx.clock.advance(ctx.config.jobs.priceLeaseMs);
    expect(await jobQueue().drain()).toBe(2);
    const after = await jobs([eth1, eth2] as string[]);
    for (const job of after) expect(job).toMatchObject({ status: 'COMPLETED', attempts: 2 });
    expect((await callbacksOf(account)).map((c) => c.data.jobId).sort()).toEqual([eth1, eth2, sol].sort());
    expect(await countEntries(ctx.database.db, account.accountId, 'refund')).toBe(0);
  });

  it('a job of the batch whose lease was taken over is not finished by it; the others are', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const [taken, kept] = await scheduleMany(account, ['SOL', 'SOL'], HOOK);
    let release: () => void = () => {};
    const stalled = new Promise<void>((resolve) => {
      release = resolve;
    });
    const real = createPriceService(ctx.config.prices, ctx.clock, []);
    const queue = jobQueue({
      prices: pricesWith(async (...args) => {
        await stalled;
        return real.price(...args);
      }),
    });
    ctx.clock.advance(1000);
    const running = queue.drain();
    while ((await jobs([taken, kept] as string[])).some((job) => job?.status !== 'PROCESSING')) {
      await new Promise((r) => setTimeout(r, 5));
    }
    // Another worker holds this one now (as after a lapsed lease and a new claim).
    await ctx.database.db.query("UPDATE scheduled_jobs SET lease_token = 'another-worker' WHERE id = $1", [
      taken,
    ]);
    release();
    expect(await running).toBe(2);
    const [t, k] = await jobs([taken, kept] as string[]);
    expect(t).toMatchObject({ status: 'PROCESSING', result: null, delivery_id: null });
    expect(k).toMatchObject({ status: 'COMPLETED', delivery_id: expect.stringMatching(/^msg_/) });
    expect((await callbacksOf(account)).map((c) => c.data.jobId)).toEqual([kept]);
    // Let the test's other worker finish it: a lapsed lease, claimed again.
    ctx.clock.advance(ctx.config.jobs.priceLeaseMs);
    await ctx.database.db.query(
      "UPDATE scheduled_jobs SET lease_until = $2 WHERE id = $1 AND lease_token = 'another-worker'",
      [taken, ctx.clock.now()],
    );
    expect(await jobQueue().drain()).toBe(1);
    expect((await jobs([taken] as string[]))[0]).toMatchObject({ status: 'COMPLETED', attempts: 2 });
  });

  it('a callback that cannot be written holds back its own job only: no status without its callback', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const ids = await scheduleMany(account, ['BTC', 'BTC', 'BTC'], HOOK);
    const poisoned = ids[1] as string;
    const outbox: CallbackOutbox = {
      ...webhookOutbox,
      async enqueueCallback(tx, input) {
        if ((input.data as { jobId?: string }).jobId === poisoned) throw new Error('outbox write failed');
        return webhookOutbox.enqueueCallback(tx, input);
      },
    };
    ctx.clock.advance(1000);
    expect(await jobQueue({ outbox }).drain()).toBe(3);
    const rows = await jobs(ids);
    for (const [i, row] of rows.entries()) {
      if (ids[i] === poisoned)
        expect(row).toMatchObject({ status: 'PROCESSING', result: null, delivery_id: null });
      else expect(row).toMatchObject({ status: 'COMPLETED', delivery_id: expect.stringMatching(/^msg_/) });
    }
    expect((await callbacksOf(account)).map((c) => c.data.jobId).sort()).toEqual(
      ids.filter((id) => id !== poisoned).sort(),
    );
    ctx.clock.advance(ctx.config.jobs.priceLeaseMs);
    expect(await jobQueue().drain()).toBe(1);
    expect((await jobs([poisoned]))[0]).toMatchObject({ status: 'COMPLETED', attempts: 2 });
    expect((await callbacksOf(account)).map((c) => c.data.jobId).sort()).toEqual([...ids].sort());
  });
});
