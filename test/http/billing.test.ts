import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';
import { probeRoutes } from '../helpers/probe-routes.js';

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext({ extraRoutes: probeRoutes });
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

function callProbe(key: string, outcome = 'ok') {
  return ctx.request(key, { method: 'POST', url: '/api/v1/test/billed', payload: { outcome } });
}

describe('billing at the HTTP edge', () => {
  it('charges a success once and says so in the body', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const response = await callProbe(account.key);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      requestId: response.headers['x-request-id'],
      ok: true,
      costUsd: '0.01',
      remainingBalanceUsd: '0.99',
    });
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(990_000n);
    const [entry] = await ctx.database.db.query(
      `SELECT operation, request_id, key_id FROM ledger_entries WHERE account_id = $1 AND kind = 'charge'`,
      [account.accountId],
    );
    expect(entry).toEqual({
      operation: 'testBilled',
      request_id: response.headers['x-request-id'],
      key_id: account.keyId,
    });
  });

  it('does not charge errors: a domain error, an internal error, a validation error', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const unavailable = await callProbe(account.key, 'unavailable');
    expect(unavailable.statusCode).toBe(503);
    expect(unavailable.json()).toEqual({
      error: 'No source could price it',
      code: 'PRICE_UNAVAILABLE',
      requestId: unavailable.headers['x-request-id'],
    });

    const crash = await callProbe(account.key, 'crash');
    expect(crash.statusCode).toBe(500);
    expect(crash.json()).toEqual({
      error: 'Internal server error; retry later',
      code: 'INTERNAL_ERROR',
      requestId: crash.headers['x-request-id'],
    });
    expect(crash.body).not.toMatch(/hunter2|10\.0\.0\.7|stack/);

    const invalid = await callProbe(account.key, 'sideways');
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().code).toBe('VALIDATION_ERROR');

    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(1_000_000n);
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(0);
  });

  it('answers 402 with no result when the balance cannot pay', async () => {
    const account = await ctx.createAccount({ balanceUsd: '0' });
    const response = await callProbe(account.key);
    expect(response.statusCode).toBe(402);
    expect(response.json()).toEqual({
      error: 'The balance cannot pay for this request (0.01 USD)',
      code: 'INSUFFICIENT_BALANCE',
      details: { costUsd: '0.01', balanceUsd: '0.00' },
      requestId: response.headers['x-request-id'],
    });
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(0);
  });

  it('500 concurrent billed requests against 1.00: exactly 100 succeed, 400 get 402, balance 0.00', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const responses = await Promise.all(Array.from({ length: 500 }, () => callProbe(account.key)));
    const ok = responses.filter((r) => r.statusCode === 200);
    const declined = responses.filter((r) => r.statusCode === 402);
    expect(ok).toHaveLength(100);
    expect(declined).toHaveLength(400);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(0n);
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(100);
    // Each success reports a distinct remaining balance, from 0.99 down to 0.00.
    const remaining = ok.map((r) => r.json().remainingBalanceUsd as string).sort();
    expect(new Set(remaining).size).toBe(100);
    expect(remaining).toContain('0.00');
    expect(remaining).toContain('0.99');
    await expectLedgerReconciles(ctx.database.db);
  });
});
