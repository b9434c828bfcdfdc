import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { balanceOf } from '../helpers/ledger.js';
import { poll, question, submit, testQueue } from './helpers.js';

/** GET /ai/requests: the account's AI requests, newest first, with their outcome; free. */

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});

const list = (key: string, query = '') =>
  ctx.request(key, { method: 'GET', url: `/api/v1/ai/requests${query}` });

describe('GET /ai/requests', () => {
  it('lists newest first with status, outcome, cost and refund; pages; filters; other accounts apart', async () => {
    const account = await ctx.createAccount({ balanceUsd: '2.00' });
    const ids: string[] = [];
    for (const context of ['', '[sandbox:votes=0,0,x,x]', '']) {
      const response = await submit(ctx, account.key, question({ context }));
      expect(response.statusCode).toBe(200);
      ids.push(response.json().requestId);
      ctx.clock.advance(1000);
    }
    const other = await ctx.createAccount({ balanceUsd: '1.00' });
    await submit(ctx, other.key, question());
    expect(await testQueue(ctx).drain()).toBe(4);
    // The newest is left pending by a fourth submit after the worker ran.
    const pending = (await submit(ctx, account.key, question())).json().requestId as string;

    const before = await balanceOf(ctx.database.db, account.accountId);
    const response = await list(account.key);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ total: 4, page: 1, pageSize: 50 });
    expect(body.requests.map((r: { requestId: string }) => r.requestId)).toEqual([
      pending,
      ids[2],
      ids[1],
      ids[0],
    ]);
    const q = question();
    expect(body.requests[0]).toEqual({
      requestId: pending,
      status: 'PENDING',
      question: q.question,
      outcomes: q.outcomes,
      context: null,
      marketId: null,
      createdAt: ctx.clock.now().toISOString(),
      completedAt: null,
      winningOutcomeLabel: null,
      canDetermine: null,
      abstainReason: null,
      costUsd: '0.25',
      refundUsd: null,
      votes: [],
    });
    expect(body.requests[1]).toMatchObject({
      status: 'COMPLETED',
      winningOutcomeLabel: expect.any(String),
      canDetermine: true,
      abstainReason: null,
      refundUsd: null,
    });
    // Each listed request carries its votes, as its record shows them.
    const record = (await poll(ctx, account.key, ids[2] as string)).json();
    expect(body.requests[1].votes).toEqual(record.votes);
    expect(record.votes).toHaveLength(4);
    expect(body.requests[2]).toMatchObject({
      status: 'FAILED',
      refundUsd: '0.25',
      winningOutcomeLabel: null,
    });
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(before);

    const failed = (await list(account.key, '?status=FAILED')).json();
    expect(failed.requests.map((r: { requestId: string }) => r.requestId)).toEqual([ids[1]]);
    const paged = (await list(account.key, '?page=2&pageSize=3')).json();
    expect(paged).toMatchObject({ total: 4, page: 2, pageSize: 3 });
    expect(paged.requests.map((r: { requestId: string }) => r.requestId)).toEqual([ids[0]]);
    expect((await list(other.key)).json().total).toBe(1);
  });

  it('refuses unknown filters and needs the ai permission', async () => {
    const account = await ctx.createAccount();
    const bad = await list(account.key, '?status=DONE');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('VALIDATION_ERROR');
    const narrow = await ctx.addKey(account.accountId, ['price']);
    expect((await list(narrow.key)).json().code).toBe('PERMISSION_DENIED');
  });
});
