import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { balanceOf } from '../helpers/ledger.js';

let ctx: TestContext;
let account: TestAccount;

beforeAll(async () => {
  ctx = await createTestContext();
  account = await ctx.createAccount({ balanceUsd: '1.00' });
  for (let i = 0; i < 3; i++) {
    const r = await ctx.request(account.key, { method: 'GET', url: '/api/v1/price/SOL' });
    expect(r.statusCode).toBe(200);
  }
});
afterAll(async () => {
  await ctx.close();
});

const list = (key: string, query = '') =>
  ctx.request(key, { method: 'GET', url: `/api/v1/account/transactions${query}` });

describe('GET /account/transactions', () => {
  it('lists the ledger newest first, with cursor paging, and costs nothing', async () => {
    const before = await balanceOf(ctx.database.db, account.accountId);
    const first = await list(account.key, '?limit=2');
    expect(first.statusCode).toBe(200);
    const page1 = first.json();
    expect(page1.transactions).toHaveLength(2);
    expect(page1.hasMore).toBe(true);
    expect(page1.transactions[0]).toMatchObject({
      kind: 'charge',
      amountUsd: '-0.01',
      operation: 'getPrice',
      keyId: account.keyId,
      requestId: expect.stringMatching(/^req_/),
    });
    const second = (await list(account.key, `?limit=2&startingAfter=${page1.nextStartingAfter}`)).json();
    expect(second.transactions.map((t: { kind: string }) => t.kind)).toEqual(['charge', 'deposit']);
    expect(second).toMatchObject({ hasMore: false, nextStartingAfter: null });
    const all = [...page1.transactions, ...second.transactions];
    expect(new Set(all.map((t: { id: string }) => t.id)).size).toBe(4);
    // Each balance follows from the one before it.
    expect(all.map((t: { balanceAfterUsd: string }) => t.balanceAfterUsd)).toEqual([
      '0.97',
      '0.98',
      '0.99',
      '1.00',
    ]);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(before);
  });

  it('filters by kind and by time; another account sees only its own', async () => {
    const deposits = (await list(account.key, '?kind=deposit')).json();
    expect(deposits.transactions).toHaveLength(1);
    expect(deposits.transactions[0]).toMatchObject({ kind: 'deposit', amountUsd: '1.00' });
    const future = new Date(Date.now() + 86_400_000).toISOString();
    expect((await list(account.key, `?from=${future}`)).json().transactions).toEqual([]);
    const other = await ctx.createAccount({ balanceUsd: '2.00' });
    const theirs = (await list(other.key)).json().transactions;
    expect(theirs).toHaveLength(1);
    expect(theirs[0]).toMatchObject({ amountUsd: '2.00' });
  });

  it('refuses bad queries with VALIDATION_ERROR naming each problem', async () => {
    for (const query of [
      '?limit=0',
      '?limit=101',
      '?kind=gift',
      '?startingAfter=abc',
      '?from=yesterday',
      '?from=0000-01-01T00:00:00Z',
      '?to=9999-12-31T23:00:00-05:00',
      '?from=2026-12-01T00:00:00Z&to=2026-11-01T00:00:00Z',
      '?color=red',
    ]) {
      const r = await list(account.key, query);
      expect(r.statusCode, query).toBe(400);
      expect(r.json().code).toBe('VALIDATION_ERROR');
    }
  });
});
