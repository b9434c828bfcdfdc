import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { periodsAt } from '../../src/limits/quotas.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';
import { probeRoutes } from '../helpers/probe-routes.js';

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext({ extraRoutes: probeRoutes });
  ctx.clock.set('2026-11-21T23:59:00Z');
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

const billed = (key: string) => ctx.request(key, { method: 'POST', url: '/api/v1/test/billed', payload: {} });

async function keyWithQuotas(owner: TestAccount, quotas: object) {
  const response = await ctx.request(owner.key, {
    method: 'POST',
    url: '/api/v1/keys',
    payload: { name: 'quota', permissions: ['price', 'keys', 'account'], quotas },
  });
  expect(response.statusCode).toBe(200);
  return response.json() as { id: string; key: string };
}

describe('UTC calendar periods', () => {
  it('start at midnight and on the 1st, and reset at the next', () => {
    expect(periodsAt(new Date('2026-12-31T23:59:59.999Z'))).toEqual({
      day: { start: '2026-12-31', resetsAt: new Date('2027-01-01T00:00:00Z') },
      month: { start: '2026-12-01', resetsAt: new Date('2027-01-01T00:00:00Z') },
    });
    expect(periodsAt(new Date('2028-02-29T00:00:00Z')).month.resetsAt).toEqual(
      new Date('2028-03-01T00:00:00Z'),
    );
  });
});

describe('quotas', () => {
  it('300 concurrent requests against a daily quota of 100: exactly 100 succeed and are charged', async () => {
    const owner = await ctx.createAccount({ balanceUsd: '10.00' });
    const limited = await keyWithQuotas(owner, { dailyRequests: 100 });
    const responses = await Promise.all(Array.from({ length: 300 }, () => billed(limited.key)));
    const ok = responses.filter((r) => r.statusCode === 200);
    const refused = responses.filter((r) => r.statusCode === 429);
    expect(ok).toHaveLength(100);
    expect(refused).toHaveLength(200);
    expect(refused[0]?.json()).toEqual({
      error: "The key's daily request quota (100) is used up until 2026-11-22T00:00:00.000Z",
      code: 'QUOTA_EXCEEDED',
      details: { period: 'day', limit: 'requests', quota: '100', resetsAt: '2026-11-22T00:00:00.000Z' },
      requestId: refused[0]?.headers['x-request-id'],
    });
    expect(refused[0]?.headers['retry-after']).toBe('60');
    expect(await countEntries(ctx.database.db, owner.accountId, 'charge')).toBe(100);
    expect(await balanceOf(ctx.database.db, owner.accountId)).toBe(9_000_000n);

    const listed = (await ctx.request(owner.key, { method: 'GET', url: '/api/v1/keys' })).json();
    const entry = listed.keys.find((k: { id: string }) => k.id === limited.id);
    expect(entry.usage).toEqual({
      day: {
        periodStart: '2026-11-21',
        resetsAt: '2026-11-22T00:00:00.000Z',
        requests: 100,
        spendUsd: '1.00',
      },
      month: {
        periodStart: '2026-11-01',
        resetsAt: '2026-12-01T00:00:00.000Z',
        requests: 100,
        spendUsd: '1.00',
      },
    });
    await expectLedgerReconciles(ctx.database.db);

    // A new UTC day brings a new daily quota.
    ctx.clock.set('2026-11-22T00:00:01Z');
    expect((await billed(limited.key)).statusCode).toBe(200);
    ctx.clock.set('2026-11-21T23:59:00Z');
  });

  it('caps spend, counts only what was charged, and refuses before the balance is touched', async () => {
    const owner = await ctx.createAccount({ balanceUsd: '10.00' });
    const limited = await keyWithQuotas(owner, { monthlySpendUsd: '0.05' });
    const statuses = [];
    for (let i = 0; i < 7; i++) statuses.push((await billed(limited.key)).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    const refused = await billed(limited.key);
    expect(refused.json().details).toEqual({
      period: 'month',
      limit: 'spend',
      quota: '0.05 USD',
      resetsAt: '2026-12-01T00:00:00.000Z',
    });
    expect(await balanceOf(ctx.database.db, owner.accountId)).toBe(9_950_000n);
  });

  it('does not count a request the balance could not pay', async () => {
    const owner = await ctx.createAccount({ balanceUsd: '0.02' });
    const limited = await keyWithQuotas(owner, { dailyRequests: 5 });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await billed(limited.key)).statusCode);
    expect(statuses).toEqual([200, 200, 402, 402]);
    const listed = (await ctx.request(owner.key, { method: 'GET', url: '/api/v1/keys' })).json();
    expect(listed.keys.find((k: { id: string }) => k.id === limited.id).usage.day.requests).toBe(2);
  });

  it('is shared by a key and its rotated successor', async () => {
    const owner = await ctx.createAccount({ balanceUsd: '10.00' });
    const limited = await keyWithQuotas(owner, { dailyRequests: 3 });
    expect((await billed(limited.key)).statusCode).toBe(200);
    expect((await billed(limited.key)).statusCode).toBe(200);
    const rotated = (
      await ctx.request(owner.key, { method: 'POST', url: `/api/v1/keys/${limited.id}/rotate` })
    ).json();
    expect(rotated.newKey.quotas.dailyRequests).toBe(3);
    expect((await billed(rotated.newKey.key)).statusCode).toBe(200);
    expect((await billed(rotated.newKey.key)).statusCode).toBe(429);
    expect((await billed(limited.key)).statusCode).toBe(429);
  });

  it('a quota of zero refuses every billed request; free requests are not counted', async () => {
    const owner = await ctx.createAccount({ balanceUsd: '1.00' });
    const limited = await keyWithQuotas(owner, { dailyRequests: 0 });
    expect((await ctx.request(limited.key, { method: 'GET', url: '/api/v1/account' })).statusCode).toBe(200);
    expect((await billed(limited.key)).statusCode).toBe(429);
  });
});
