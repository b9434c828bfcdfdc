import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';
import { PROBE_TABLE, transactionalProbeRoutes } from '../helpers/probe-routes.js';

/**
 * Routes billed inside their own transaction (`billing: 'transaction'`): the charge and the rows it
 * pays for commit together or not at all, under concurrency and quotas too.
 */

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext({ extraRoutes: transactionalProbeRoutes });
  await ctx.database.db.exec(PROBE_TABLE);
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

const call = (key: string, outcome = 'ok') =>
  ctx.request(key, { method: 'POST', url: '/api/v1/test/billed-in-transaction', payload: { outcome } });

async function rowsOf(accountId: string): Promise<number> {
  const [row] = await ctx.database.db.query<{ n: bigint }>(
    'SELECT count(*) AS n FROM probe_rows WHERE account_id = $1',
    [accountId],
  );
  return Number(row?.n ?? 0);
}

describe('billing inside the route’s transaction', () => {
  it('commits the charge with the row and reports both', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const response = await call(account.key);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      requestId: response.headers['x-request-id'],
      rows: 1,
      costUsd: '0.01',
      remainingBalanceUsd: '0.99',
    });
    const [entry] = await ctx.database.db.query(
      `SELECT operation, request_id, key_id, amount_micros FROM ledger_entries WHERE account_id = $1 AND kind = 'charge'`,
      [account.accountId],
    );
    expect(entry).toEqual({
      operation: 'testBilledInTransaction',
      request_id: response.headers['x-request-id'],
      key_id: account.keyId,
      amount_micros: -10_000n,
    });
  });

  it('a failure after the charge rolls back the charge and the row', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const response = await call(account.key, 'fail-after-charge');
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({
      error: 'Failed after charging',
      code: 'PRICE_UNAVAILABLE',
      requestId: response.headers['x-request-id'],
    });
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(0);
    expect(await rowsOf(account.accountId)).toBe(0);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(1_000_000n);
  });

  it('an unpaid request writes no row: 402 with the cost', async () => {
    const account = await ctx.createAccount({ balanceUsd: '0.00' });
    const response = await call(account.key);
    expect(response.statusCode).toBe(402);
    expect(response.json()).toEqual({
      error: 'The balance cannot pay for this request (0.01 USD)',
      code: 'INSUFFICIENT_BALANCE',
      details: { costUsd: '0.01', balanceUsd: '0.00' },
      requestId: response.headers['x-request-id'],
    });
    expect(await rowsOf(account.accountId)).toBe(0);
  });

  it('200 concurrent requests on 1.00: exactly 100 rows and 100 charges', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const responses = await Promise.all(Array.from({ length: 200 }, () => call(account.key)));
    const statuses = responses.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(100);
    expect(statuses.filter((s) => s === 402)).toHaveLength(100);
    expect(await rowsOf(account.accountId)).toBe(100);
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(100);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(0n);
  });

  it('a quota refusal rolls back the row, and a refused request does not count', async () => {
    const owner = await ctx.createAccount({ balanceUsd: '1.00' });
    const created = await ctx.request(owner.key, {
      method: 'POST',
      url: '/api/v1/keys',
      payload: { name: 'capped', permissions: ['price'], quotas: { dailyRequests: 2 } },
    });
    expect(created.statusCode).toBe(200);
    const capped = (created.json() as { key: string }).key;
    const responses = await Promise.all(Array.from({ length: 10 }, () => call(capped)));
    expect(responses.filter((r) => r.statusCode === 200)).toHaveLength(2);
    const refused = responses.filter((r) => r.statusCode === 429);
    expect(refused).toHaveLength(8);
    expect(refused[0]?.json()).toMatchObject({ code: 'QUOTA_EXCEEDED', details: { limit: 'requests' } });
    expect(await rowsOf(owner.accountId)).toBe(2);
    const [usage] = await ctx.database.db.query<{ requests: bigint }>(
      `SELECT requests FROM key_usage WHERE period = 'day' ORDER BY requests DESC LIMIT 1`,
    );
    expect(usage?.requests).toBe(2n);
  });
});
