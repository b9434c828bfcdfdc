import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ACTIVE_KEYS } from '../../src/keys/keys.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { countEntries } from '../helpers/ledger.js';

/** Inputs found by review to have gone wrong once; each must stay a clear 4xx and cost nothing. */
let ctx: TestContext;
let account: TestAccount;

beforeAll(async () => {
  ctx = await createTestContext();
  account = await ctx.createAccount({ balanceUsd: '1.00' });
});
afterAll(async () => {
  await ctx.close();
});

describe('hardening', () => {
  it('HEAD on a billed GET route is not served (and so not billed)', async () => {
    const head = await ctx.request(account.key, { method: 'HEAD', url: '/api/v1/price/SOL' });
    expect(head.statusCode).toBe(404);
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(0);
  });

  it('NUL and control characters are a 400, never a 500', async () => {
    const cases = [
      { method: 'PATCH', url: '/api/v1/keys/%00', payload: { name: 'x' } },
      { method: 'DELETE', url: '/api/v1/keys/abc%00' },
      { method: 'POST', url: '/api/v1/keys/%00/rotate' },
      { method: 'POST', url: '/api/v1/keys', payload: { name: 'a\u0000b' } },
      { method: 'GET', url: '/api/v1/price/SO%00L' },
      { method: 'POST', url: '/api/v1/price/batch', payload: { symbols: ['SOL\u0000'] } },
    ] as const;
    for (const c of cases) {
      const response = await ctx.request(account.key, c);
      expect(response.statusCode, `${c.method} ${c.url}`).toBe(400);
    }
  });

  it('a rate below the minimum is refused, not turned into "unlimited"', async () => {
    const response = await ctx.request(account.key, {
      method: 'POST',
      url: '/api/v1/keys',
      payload: { name: 'tiny', rateLimit: { requestsPerSecond: 5e-324, burst: 1 } },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().code).toBe('VALIDATION_ERROR');
  });

  it('more than 50 symbols is BATCH_LIMIT_EXCEEDED however many there are', async () => {
    const symbols = Array.from({ length: 1500 }, () => 'SOL');
    const response = await ctx.request(account.key, {
      method: 'POST',
      url: '/api/v1/price/batch',
      payload: { symbols },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 'BATCH_LIMIT_EXCEEDED', maxSymbols: 50 });
  });

  it('reviving expired keys through PATCH cannot exceed the active-key cap', async () => {
    const owner = await ctx.createAccount();
    const soon = new Date(ctx.clock.now().getTime() + 60_000).toISOString();
    const expiring = [];
    for (let i = 0; i < 5; i++) {
      expiring.push(
        (
          await ctx.request(owner.key, {
            method: 'POST',
            url: '/api/v1/keys',
            payload: { name: `e${i}`, expiresAt: soon },
          })
        ).json(),
      );
    }
    ctx.clock.advance(120_000);
    for (let i = 0; i < MAX_ACTIVE_KEYS - 1; i++) {
      const r = await ctx.request(owner.key, {
        method: 'POST',
        url: '/api/v1/keys',
        payload: { name: `k${i}` },
      });
      expect(r.statusCode).toBe(200);
    }
    const revive = await ctx.request(owner.key, {
      method: 'PATCH',
      url: `/api/v1/keys/${expiring[0].id}`,
      payload: { expiresAt: null },
    });
    expect(revive.statusCode).toBe(409);
    expect(revive.json().code).toBe('MAX_KEYS_EXCEEDED');
  });
});
