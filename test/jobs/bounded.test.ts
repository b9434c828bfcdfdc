import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createResolver } from '../../src/ai/resolver.js';
import { aiJobResolver } from '../../src/jobs/ai.js';
import type { JobRow } from '../../src/jobs/jobs.js';
import { jobQueueHandler } from '../../src/jobs/runner.js';
import { silentLog } from '../../src/logger.js';
import { createPriceService } from '../../src/prices/index.js';
import type { QueueHandler } from '../../src/queue/queue.js';
import { webhookOutbox } from '../../src/webhooks/outbox.js';
import { CALLBACKS_VIEW } from '../helpers/callbacks.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { callbacks } from '../helpers/jobs.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';

/**
 * Bounded work for scheduled jobs (docs/operations.md#bounded-work): every claim counts a run, whether or not its worker
 * survives it. A worker "lost" here claims and never finishes — what a run that kills its process
 * leaves behind (test/jobs/processes.test.ts does it with real processes). Past JOB_MAX_ATTEMPTS
 * the job is FAILED, refunded once, called back once, and never run again.
 */

let ctx: TestContext;
let handler: QueueHandler<JobRow>;
const HOOK = 'https://hooks.example.com/bounded';

beforeAll(async () => {
  ctx = await createTestContext();
  await ctx.database.db.exec(CALLBACKS_VIEW);
  ctx.clock.set('2026-05-01T12:00:00.000Z');
  handler = jobQueueHandler({
    db: ctx.database.db,
    clock: ctx.clock,
    log: silentLog,
    prices: createPriceService(ctx.config.prices, ctx.clock, []),
    callbacks: webhookOutbox,
    ai: aiJobResolver(createResolver(ctx.config.ai, ctx.clock)),
    settings: ctx.config.jobs,
  });
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

async function schedule(account: TestAccount, url: string, payload: object): Promise<string> {
  const response = await ctx.request(account.key, { method: 'POST', url: `/api/v1${url}`, payload });
  expect(response.statusCode).toBe(200);
  return response.json().jobId;
}

async function job(id: string) {
  const [row] = await ctx.database.db.query<{ status: string; attempts: number; error: unknown }>(
    'SELECT status, attempts, error FROM scheduled_jobs WHERE id = $1',
    [id],
  );
  return row;
}

/** Claims what is due, as a worker that dies before finishing anything would. */
async function claimAndDie(): Promise<JobRow[]> {
  return handler.claim(100, ctx.clock.now());
}

/** Claims what is due and runs it, as a live worker does (price checks of one claim together). */
async function claimAndRun(): Promise<string[]> {
  const claimed = await handler.claim(100, ctx.clock.now());
  const prices = claimed.filter((j) => j.job_type === 'PRICE_RESOLUTION');
  if (prices.length > 0) await handler.processBatch?.(prices);
  for (const one of claimed.filter((j) => j.job_type !== 'PRICE_RESOLUTION')) await handler.process(one);
  return claimed.map((j) => j.id);
}

const leaseOf = (type: string) =>
  type === 'AI_RESOLUTION' ? ctx.config.jobs.aiLeaseMs : ctx.config.jobs.priceLeaseMs;

describe('a scheduled job whose run kills its worker every time', () => {
  for (const [type, url, payload] of [
    ['PRICE_RESOLUTION', '/price/schedule', { symbol: 'SOL' }],
    ['AI_RESOLUTION', '/ai/schedule', { question: 'Will it?', outcomes: ['Yes', 'No'] }],
  ] as const) {
    it(`${type}: after ${5} lost runs it is FAILED, refunded once, called back once, never run again`, async () => {
      const max = ctx.config.jobs.maxAttempts;
      expect(max).toBe(5);
      const account = await ctx.createAccount({ balanceUsd: '1.00' });
      const id = await schedule(account, url, {
        ...payload,
        resolutionTimestamp: new Date(ctx.clock.now().getTime() + 1000).toISOString(),
        callbackUrl: HOOK,
      });
      const charged = await balanceOf(ctx.database.db, account.accountId);
      expect(charged).toBeLessThan(1_000_000n);
      ctx.clock.advance(1000);
      for (let run = 1; run <= max; run++) {
        expect((await claimAndDie()).map((j) => [j.id, j.attempts])).toEqual([[id, run]]);
        expect(await job(id)).toMatchObject({ status: 'PROCESSING', attempts: run });
        ctx.clock.advance(leaseOf(type));
      }
      // Claimed once more: not run, but failed and refunded.
      expect(await claimAndRun()).toEqual([id]);
      expect(await job(id)).toMatchObject({
        status: 'FAILED',
        attempts: max + 1,
        error: { code: 'INTERNAL_ERROR', message: 'The job could not be run; it was refunded' },
      });
      expect(await balanceOf(ctx.database.db, account.accountId)).toBe(1_000_000n);
      expect(await countEntries(ctx.database.db, account.accountId, 'refund')).toBe(1);
      const mine = (await callbacks(ctx.database.db)).filter((c) => c.account_id === account.accountId);
      expect(mine).toEqual([
        expect.objectContaining({
          status: 'failed',
          data: expect.objectContaining({
            jobId: id,
            error: expect.objectContaining({ code: 'INTERNAL_ERROR' }),
          }),
        }),
      ]);
      ctx.clock.advance(100 * 3600_000);
      expect(await claimAndRun()).toEqual([]);
      expect(await countEntries(ctx.database.db, account.accountId, 'refund')).toBe(1);
      await expectLedgerReconciles(ctx.database.db);
    });
  }

  it('a spent price check comes back by itself and fails alone; the one due beside it completes', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const due = () => new Date(ctx.clock.now().getTime() + 1000).toISOString();
    const doomed = await schedule(account, '/price/schedule', {
      symbol: 'BTC',
      resolutionTimestamp: due(),
      callbackUrl: HOOK,
    });
    ctx.clock.advance(1000);
    for (let run = 1; run <= ctx.config.jobs.maxAttempts; run++) {
      await claimAndDie();
      ctx.clock.advance(ctx.config.jobs.priceLeaseMs);
    }
    // Due a second later; the doomed job, back from a run that never finished, is claimed by
    // itself first (test/jobs/processes.test.ts: a poison job's neighbour), then the other.
    const fine = await schedule(account, '/price/schedule', {
      symbol: 'BTC',
      resolutionTimestamp: due(),
      callbackUrl: HOOK,
    });
    ctx.clock.advance(1000);
    expect(await claimAndRun()).toEqual([doomed]);
    expect(await claimAndRun()).toEqual([fine]);
    expect(await job(doomed)).toMatchObject({ status: 'FAILED', attempts: ctx.config.jobs.maxAttempts + 1 });
    expect(await job(fine)).toMatchObject({ status: 'COMPLETED', attempts: 1 });
    expect(await countEntries(ctx.database.db, account.accountId, 'refund')).toBe(1);
  });
});
