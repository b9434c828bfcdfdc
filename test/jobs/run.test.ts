import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createResolver } from '../../src/ai/resolver.js';
import { aiJobResolver } from '../../src/jobs/ai.js';
import { jobQueueHandler } from '../../src/jobs/runner.js';
import { silentLog } from '../../src/logger.js';
import { createPriceService } from '../../src/prices/index.js';
import { WorkQueue } from '../../src/queue/queue.js';
import { webhookOutbox } from '../../src/webhooks/outbox.js';
import { createWorker, type Worker } from '../../src/worker/worker.js';
import { CALLBACKS_VIEW } from '../helpers/callbacks.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { callbacks, crashingAi } from '../helpers/jobs.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';

/**
 * Running jobs: on time (claimed when due, not before), once (a worker that lost its lease cannot
 * finish), with the result and its callback row committed with the status, and a failed job
 * refunded once.
 */

let ctx: TestContext;
let worker: Worker;
const HOOK = 'https://hooks.example.com/sibyl';
const UNKNOWN_MINT = '9n4nbM75f5Ui33ZbPYXn59EwSgE8CGsHtAeTH5YFeJ9E';
const outbox = webhookOutbox;

beforeAll(async () => {
  ctx = await createTestContext();
  await ctx.database.db.exec(CALLBACKS_VIEW);
  ctx.clock.set('2026-11-22T12:00:00.000Z');
  worker = await createWorker({
    config: ctx.config,
    db: ctx.database.db,
    clock: ctx.clock,
    log: silentLog,
    callbacks: outbox,
    liveVenues: [],
  });
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

const drain = () => worker.queues.get('scheduled-jobs')?.drain() ?? Promise.resolve(-1);
const at = (ms: number) => new Date(ctx.clock.now().getTime() + ms).toISOString();

async function schedule(account: TestAccount, url: string, payload: object): Promise<string> {
  const response = await ctx.request(account.key, { method: 'POST', url: `/api/v1${url}`, payload });
  expect(response.statusCode).toBe(200);
  return response.json().jobId;
}

async function job(id: string) {
  const [row] = await ctx.database.db.query<{
    status: string;
    result: Record<string, unknown> | null;
    error: unknown;
    attempts: number;
    delivery_id: string | null;
  }>('SELECT status, result, error, attempts, delivery_id FROM scheduled_jobs WHERE id = $1', [id]);
  return row;
}

describe('running scheduled jobs', () => {
  it('runs a price check when due, not before, and calls back with the price and the job id', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const id = await schedule(account, '/price/schedule', {
      symbol: 'SOL',
      resolutionTimestamp: at(60_000),
      callbackUrl: HOOK,
    });
    ctx.clock.advance(59_999);
    expect(await drain()).toBe(0);
    ctx.clock.advance(1);
    expect(await drain()).toBe(1);
    const done = await job(id);
    expect(done).toMatchObject({
      status: 'COMPLETED',
      attempts: 1,
      delivery_id: expect.stringMatching(/^msg_/),
    });
    expect(done?.result).toMatchObject({
      symbol: 'SOL',
      isValid: true,
      sourceCount: expect.any(Number),
      resolutionTimestamp: ctx.clock.now().toISOString(),
    });
    const [callback] = (await callbacks(ctx.database.db)).filter((c) => c.account_id === account.accountId);
    expect(callback).toMatchObject({
      type: 'price',
      status: 'completed',
      data: { jobId: id, symbol: 'SOL', costUsd: '0.05', remainingBalanceUsd: '0.95' },
    });
    expect(callback?.data.vwapPrice).toBe(done?.result?.vwapPrice);
    // Reading it back: the result stays readable, with its delivery.
    const read = await ctx.request(account.key, { method: 'GET', url: `/api/v1/price/scheduled/${id}` });
    expect(read.json()).toMatchObject({
      status: 'COMPLETED',
      canCancel: false,
      attempts: 1,
      result: { symbol: 'SOL' },
      error: null,
      delivery: { status: 'PENDING', attemptCount: 0, url: HOOK, attempts: [] },
    });
  });

  it('a price that cannot be had fails the job, refunds it once, and calls back failed', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const id = await schedule(account, '/price/schedule', {
      symbol: UNKNOWN_MINT,
      resolutionTimestamp: at(1000),
      callbackUrl: HOOK,
    });
    ctx.clock.advance(1000);
    expect(await drain()).toBe(1);
    expect(await job(id)).toMatchObject({
      status: 'FAILED',
      result: null,
      error: { code: 'SYMBOL_NOT_FOUND' },
    });
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(1_000_000n);
    expect(await countEntries(ctx.database.db, account.accountId, 'refund')).toBe(1);
    const [callback] = (await callbacks(ctx.database.db)).filter((c) => c.account_id === account.accountId);
    expect(callback).toMatchObject({
      type: 'price',
      status: 'failed',
      data: {
        jobId: id,
        error: { code: 'SYMBOL_NOT_FOUND' },
        refundUsd: '0.05',
        remainingBalanceUsd: '1.00',
      },
    });
  });

  it('a job without a callback URL finishes without one', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const id = await schedule(account, '/price/scheduled', { symbol: 'BTC', scheduledFor: at(1000) });
    ctx.clock.advance(1000);
    await drain();
    expect(await job(id)).toMatchObject({ status: 'COMPLETED', delivery_id: null });
  });

  it('AI jobs call back type ai with the resolution; a failed resolution is refunded', async () => {
    const account = await ctx.createAccount({ balanceUsd: '2.00' });
    const base = { outcomes: ['Yes', 'No'], resolutionTimestamp: at(1000), callbackUrl: HOOK };
    const ok = await schedule(account, '/ai/schedule', {
      ...base,
      question: 'Will it rain?',
      context: '[sandbox:votes=1,1,1,0]',
    });
    const failed = await schedule(account, '/ai/schedule', {
      ...base,
      question: 'Will it snow?',
      context: '[sandbox:votes=0,0,x,x]',
    });
    ctx.clock.advance(1000);
    expect(await drain()).toBe(2);
    const done = await job(ok);
    expect(done).toMatchObject({
      status: 'COMPLETED',
      result: {
        winningOutcomeIndex: 1,
        winningOutcomeLabel: 'No',
        agreement: 0.75,
        canDetermine: true,
        modelsUsed: ['sandbox/alpha', 'sandbox/beta', 'sandbox/gamma', 'sandbox/delta'],
      },
    });
    expect(done?.result?.votes).toHaveLength(4);
    expect(await job(failed)).toMatchObject({ status: 'FAILED', error: { code: 'AI_RESOLUTION_FAILED' } });
    const mine = (await callbacks(ctx.database.db)).filter((c) => c.account_id === account.accountId);
    // Both run at once: in either order.
    expect(mine.map((c) => [c.type, c.status, c.data.jobId]).sort()).toEqual([
      ['ai', 'completed', ok],
      ['ai', 'failed', failed],
    ]);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(1_500_000n);
  });

  it('a worker that lost its lease cannot finish the job; the one that took over does, once', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const id = await schedule(account, '/price/schedule', {
      symbol: 'ETH',
      resolutionTimestamp: at(1000),
      callbackUrl: HOOK,
    });
    ctx.clock.advance(1000);
    let release: () => void = () => {};
    const stalled = new Promise<void>((resolve) => {
      release = resolve;
    });
    const prices = createPriceService(ctx.config.prices, ctx.clock, []);
    const slowPrices = Object.assign(Object.create(prices), {
      price: async (...args: Parameters<typeof prices.price>) => {
        await stalled;
        return prices.price(...args);
      },
    });
    const deps = {
      db: ctx.database.db,
      clock: ctx.clock,
      log: silentLog,
      callbacks: outbox,
      ai: aiJobResolver(createResolver(ctx.config.ai, ctx.clock)),
      settings: ctx.config.jobs,
    };
    const stuck = new WorkQueue(jobQueueHandler({ ...deps, prices: slowPrices }), deps);
    const running = stuck.drain();
    while ((await job(id))?.status !== 'PROCESSING') await new Promise((r) => setTimeout(r, 5));
    expect(await drain()).toBe(0);
    ctx.clock.advance(ctx.config.jobs.priceLeaseMs);
    expect(await drain()).toBe(1);
    release();
    await running;
    expect(await job(id)).toMatchObject({ status: 'COMPLETED', attempts: 2 });
    const mine = (await callbacks(ctx.database.db)).filter((c) => c.account_id === account.accountId);
    expect(mine).toHaveLength(1);
  });

  it('an error on every one of its runs (JOB_MAX_ATTEMPTS, 5) fails the job and refunds it', async () => {
    const MAX_ATTEMPTS = ctx.config.jobs.maxAttempts;
    expect(MAX_ATTEMPTS).toBe(5);
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const id = await schedule(account, '/ai/schedule', {
      question: 'Q?',
      outcomes: ['A', 'B'],
      resolutionTimestamp: at(1000),
      callbackUrl: HOOK,
    });
    ctx.clock.advance(1000);
    const crashing = await createWorker({
      config: ctx.config,
      db: ctx.database.db,
      clock: ctx.clock,
      log: silentLog,
      callbacks: outbox,
      liveVenues: [],
      aiJobs: crashingAi(aiJobResolver(createResolver(ctx.config.ai, ctx.clock))),
    });
    for (let run = 1; run <= MAX_ATTEMPTS; run++) {
      await crashing.queues.get('scheduled-jobs')?.drain();
      ctx.clock.advance(ctx.config.jobs.aiLeaseMs);
    }
    expect(await job(id)).toMatchObject({
      status: 'FAILED',
      attempts: MAX_ATTEMPTS,
      error: { code: 'INTERNAL_ERROR' },
    });
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(1_000_000n);
  });

  it('a cancelled job never runs', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const id = await schedule(account, '/price/schedule', {
      symbol: 'SOL',
      resolutionTimestamp: at(600_000),
      callbackUrl: HOOK,
    });
    expect(
      (await ctx.request(account.key, { method: 'POST', url: `/api/v1/price/scheduled/${id}/cancel` }))
        .statusCode,
    ).toBe(200);
    ctx.clock.advance(600_000);
    expect(await drain()).toBe(0);
    expect(await job(id)).toMatchObject({ status: 'CANCELLED', attempts: 0 });
  });
});
