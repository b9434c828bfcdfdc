import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALLBACKS_VIEW } from '../helpers/callbacks.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';

/**
 * Scheduling, listing, reading and cancelling jobs over HTTP: the charge and the job commit
 * together, every validation rule answers its documented code for free, and the 5-minute rule holds
 * to the millisecond.
 */

let ctx: TestContext;
const HOOK = 'https://hooks.example.com/sibyl';

beforeAll(async () => {
  ctx = await createTestContext();
  await ctx.database.db.exec(CALLBACKS_VIEW);
  ctx.clock.set('2026-11-22T12:00:00.000Z');
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

const inMinutes = (minutes: number) => new Date(ctx.clock.now().getTime() + minutes * 60_000).toISOString();

function post(account: TestAccount, url: string, payload: object) {
  return ctx.request(account.key, { method: 'POST', url: `/api/v1${url}`, payload });
}
function get(account: TestAccount, url: string) {
  return ctx.request(account.key, { method: 'GET', url: `/api/v1${url}` });
}

describe('POST /price/schedule', () => {
  it('charges 0.05 in the transaction that creates a PENDING job', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const response = await post(account, '/price/schedule', {
      symbol: 'sol',
      resolutionTimestamp: inMinutes(60),
      callbackUrl: HOOK,
    });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toEqual({
      requestId: response.headers['x-request-id'],
      jobId: expect.stringMatching(/^job_[0-9A-Za-z]{22}$/),
      jobType: 'PRICE_RESOLUTION',
      scheduledFor: inMinutes(60),
      status: 'PENDING',
      createdAt: ctx.clock.now().toISOString(),
      canCancel: true,
      costUsd: '0.05',
      remainingBalanceUsd: '0.95',
    });
    const [job] = await ctx.database.db.query<{ charge_entry_id: bigint; request: unknown; mode: string }>(
      'SELECT charge_entry_id, request, mode FROM scheduled_jobs WHERE id = $1',
      [body.jobId],
    );
    const [charge] = await ctx.database.db.query<{ id: bigint; operation: string }>(
      `SELECT id, operation FROM ledger_entries WHERE account_id = $1 AND kind = 'charge'`,
      [account.accountId],
    );
    expect(job).toEqual({ charge_entry_id: charge?.id, request: { symbol: 'SOL' }, mode: 'sandbox' });
    expect(charge?.operation).toBe('schedulePriceCheck');
  });

  it('a job less than 5 minutes ahead is created with canCancel false', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const response = await post(account, '/price/schedule', {
      symbol: 'BTC',
      resolutionTimestamp: new Date(ctx.clock.now().getTime() + 299_999).toISOString(),
      callbackUrl: HOOK,
    });
    expect(response.json()).toMatchObject({ status: 'PENDING', canCancel: false });
  });

  it('the variant POST /price/scheduled takes scheduledFor and an optional callback', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const response = await post(account, '/price/scheduled', { symbol: 'ETH', scheduledFor: inMinutes(10) });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ jobType: 'PRICE_RESOLUTION', costUsd: '0.05', canCancel: true });
    const [job] = await ctx.database.db.query<{ callback_url: string | null }>(
      'SELECT callback_url FROM scheduled_jobs WHERE id = $1',
      [response.json().jobId],
    );
    expect(job?.callback_url).toBeNull();
  });

  it.each([
    ['no zone', { resolutionTimestamp: '2026-12-01T12:00:00' }, 400, 'INVALID_TIMESTAMP'],
    ['garbage', { resolutionTimestamp: 'next tuesday' }, 400, 'INVALID_TIMESTAMP'],
    ['an impossible date', { resolutionTimestamp: '2026-02-30T12:00:00Z' }, 400, 'INVALID_TIMESTAMP'],
    ['now', { resolutionTimestamp: '2026-11-22T12:00:00.000Z' }, 400, 'TIMESTAMP_IN_PAST'],
    ['the past', { resolutionTimestamp: '2026-11-22T11:59:59Z' }, 400, 'TIMESTAMP_IN_PAST'],
    [
      'more than 365 days ahead',
      { resolutionTimestamp: '2027-11-22T12:00:00.001Z' },
      400,
      'VALIDATION_ERROR',
    ],
    ['an HTTP callback', { callbackUrl: 'http://hooks.example.com/x' }, 400, 'VALIDATION_ERROR'],
    ['a malformed symbol', { symbol: 'S$L' }, 400, 'INVALID_SYMBOL'],
    ['an unknown symbol', { symbol: 'NOPE' }, 404, 'SYMBOL_NOT_FOUND'],
    ['a missing callback', { callbackUrl: undefined }, 400, 'VALIDATION_ERROR'],
    ['an unknown field', { extra: 1 }, 400, 'VALIDATION_ERROR'],
  ])('%s → %i %s, not charged', async (_name, change, status, code) => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const payload = { symbol: 'SOL', resolutionTimestamp: inMinutes(60), callbackUrl: HOOK, ...change };
    const response = await post(account, '/price/schedule', payload);
    expect(response.statusCode).toBe(status);
    expect(response.json()).toMatchObject({ code, requestId: response.headers['x-request-id'] });
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(1_000_000n);
    const jobs = await ctx.database.db.query('SELECT 1 FROM scheduled_jobs WHERE account_id = $1', [
      account.accountId,
    ]);
    expect(jobs).toHaveLength(0);
  });

  it('exactly 365 days ahead is accepted', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const response = await post(account, '/price/schedule', {
      symbol: 'SOL',
      resolutionTimestamp: '2027-11-22T12:00:00.000Z',
      callbackUrl: HOOK,
    });
    expect(response.statusCode).toBe(200);
  });

  it('an unpaid schedule creates nothing: 402', async () => {
    const account = await ctx.createAccount({ balanceUsd: '0.04' });
    const response = await post(account, '/price/schedule', {
      symbol: 'SOL',
      resolutionTimestamp: inMinutes(60),
      callbackUrl: HOOK,
    });
    expect(response.statusCode).toBe(402);
    const jobs = await ctx.database.db.query('SELECT 1 FROM scheduled_jobs WHERE account_id = $1', [
      account.accountId,
    ]);
    expect(jobs).toHaveLength(0);
  });
});

describe('POST /ai/schedule', () => {
  it('charges 0.50 and keeps what was asked', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const response = await post(account, '/ai/schedule', {
      question: 'Will SOL close above 200 on Dec 1?',
      outcomes: ['Yes', 'No'],
      context: 'Use the daily close.',
      resolutionTimestamp: inMinutes(90),
      callbackUrl: HOOK,
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      jobType: 'AI_RESOLUTION',
      costUsd: '0.50',
      remainingBalanceUsd: '0.50',
    });
    const [job] = await ctx.database.db.query<{ request: unknown }>(
      'SELECT request FROM scheduled_jobs WHERE id = $1',
      [response.json().jobId],
    );
    expect(job?.request).toEqual({
      question: 'Will SOL close above 200 on Dec 1?',
      outcomes: ['Yes', 'No'],
      context: 'Use the daily close.',
    });
  });

  it('the AI limits and availability refuse for free', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const base = {
      question: 'Q?',
      outcomes: ['A', 'B'],
      resolutionTimestamp: inMinutes(90),
      callbackUrl: HOOK,
    };
    const tooFew = await post(account, '/ai/schedule', { ...base, outcomes: ['A'] });
    expect(tooFew.json()).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { problems: [{ path: 'body.outcomes' }] },
    });
    const repeated = await post(account, '/ai/schedule', { ...base, outcomes: ['Yes', ' yes '] });
    expect(repeated.json()).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { problems: [{ path: 'body.outcomes[1]' }] },
    });
    const badDirective = await post(account, '/ai/schedule', {
      ...base,
      context: '[sandbox:votes=0,banana]',
    });
    expect(badDirective.json()).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { problems: [{ path: 'body.context' }] },
    });
    const longQuestion = await post(account, '/ai/schedule', { ...base, question: 'q'.repeat(1001) });
    expect(longQuestion.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
    const live = await ctx.createAccount({ mode: 'live', balanceUsd: '1.00' });
    const unavailable = await post(live, '/ai/schedule', base);
    expect(unavailable.statusCode).toBe(503);
    expect(unavailable.json()).toMatchObject({ code: 'AI_UNAVAILABLE' });
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(0);
    expect(await countEntries(ctx.database.db, live.accountId, 'charge')).toBe(0);
  });
});

describe('cancel', () => {
  it('at exactly 5 minutes before: cancelled and fully refunded; 1 ms later: 409', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const due = new Date(ctx.clock.now().getTime() + 3_600_000);
    const [onTime, late] = await Promise.all(
      [0, 1].map(async () => {
        const r = await post(account, '/price/schedule', {
          symbol: 'SOL',
          resolutionTimestamp: due.toISOString(),
          callbackUrl: HOOK,
        });
        return r.json().jobId as string;
      }),
    );
    const start = ctx.clock.now();
    ctx.clock.set(new Date(due.getTime() - 300_000));
    expect((await get(account, `/price/scheduled/${onTime}`)).json().canCancel).toBe(true);
    const cancelled = await post(account, `/price/scheduled/${onTime}/cancel`, {});
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json()).toEqual({
      requestId: cancelled.headers['x-request-id'],
      jobId: onTime,
      status: 'cancelled',
      refundUsd: '0.05',
      remainingBalanceUsd: '0.95',
    });
    ctx.clock.set(new Date(due.getTime() - 299_999));
    expect((await get(account, `/price/scheduled/${late}`)).json().canCancel).toBe(false);
    const list = (await get(account, '/price/scheduled')).json();
    expect(list.jobs.find((j: { jobId: string }) => j.jobId === late).canCancel).toBe(false);
    const refused = await post(account, `/price/scheduled/${late}/cancel`, {});
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({
      code: 'JOB_CANNOT_CANCEL',
      details: { status: 'PENDING', scheduledFor: due.toISOString() },
    });
    const again = await post(account, `/price/scheduled/${onTime}/cancel`, {});
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'JOB_CANNOT_CANCEL', details: { status: 'CANCELLED' } });
    expect(await countEntries(ctx.database.db, account.accountId, 'refund')).toBe(1);
    ctx.clock.set(start);
  });

  it('unknown jobs, other accounts’ jobs and the wrong path are JOB_NOT_FOUND', async () => {
    const owner = await ctx.createAccount({ balanceUsd: '1.00' });
    const stranger = await ctx.createAccount({ balanceUsd: '1.00' });
    const jobId = (
      await post(owner, '/price/schedule', {
        symbol: 'SOL',
        resolutionTimestamp: inMinutes(60),
        callbackUrl: HOOK,
      })
    ).json().jobId;
    for (const [account, url] of [
      [stranger, `/price/scheduled/${jobId}/cancel`],
      [owner, `/ai/scheduled/${jobId}/cancel`],
      [owner, '/price/scheduled/job_doesnotexist/cancel'],
    ] as const) {
      const response = await post(account, url, {});
      expect(response.statusCode).toBe(404);
      expect(response.json()).toMatchObject({ code: 'JOB_NOT_FOUND' });
    }
    expect((await get(stranger, `/price/scheduled/${jobId}`)).statusCode).toBe(404);
    expect((await get(owner, `/ai/scheduled/${jobId}`)).statusCode).toBe(404);
    expect(await countEntries(ctx.database.db, owner.accountId, 'refund')).toBe(0);
  });
});

describe('listing', () => {
  it('newest first, filtered by status, paged, with the total', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ctx.clock.advance(1000);
      const r = await post(account, '/price/schedule', {
        symbol: 'SOL',
        resolutionTimestamp: inMinutes(60),
        callbackUrl: HOOK,
      });
      ids.push(r.json().jobId);
    }
    await post(account, `/price/scheduled/${ids[0]}/cancel`, {});
    const all = (await get(account, '/price/scheduled?pageSize=2&page=1')).json();
    expect(all).toMatchObject({ total: 5, page: 1, pageSize: 2 });
    expect(all.jobs.map((j: { jobId: string }) => j.jobId)).toEqual([ids[4], ids[3]]);
    const last = (await get(account, '/price/scheduled?pageSize=2&page=3')).json();
    expect(last.jobs.map((j: { jobId: string }) => j.jobId)).toEqual([ids[0]]);
    const beyond = (await get(account, '/price/scheduled?pageSize=2&page=9')).json();
    expect(beyond).toMatchObject({ jobs: [], total: 5 });
    const cancelled = (await get(account, '/price/scheduled?status=CANCELLED')).json();
    expect(cancelled).toMatchObject({
      total: 1,
      jobs: [{ jobId: ids[0], status: 'CANCELLED', canCancel: false }],
    });
    expect((await get(account, '/ai/scheduled')).json()).toMatchObject({ jobs: [], total: 0 });
    for (const bad of ['status=DONE', 'pageSize=0', 'pageSize=101', 'page=0', 'limit=3']) {
      const response = await get(account, `/price/scheduled?${bad}`);
      expect(response.statusCode, bad).toBe(400);
      expect(response.json().code).toBe('VALIDATION_ERROR');
    }
  });
});
