import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { balanceOf } from '../helpers/ledger.js';

let ctx: TestContext;
let account: TestAccount;

beforeAll(async () => {
  ctx = await createTestContext();
  account = await ctx.createAccount({ balanceUsd: '5.00' });
});
afterAll(async () => {
  await ctx.close();
});

// PostgreSQL's text cannot hold NUL: an id carrying one is bad input, stated in each path
// parameter's schema (docs/api.md#errors), never a 500 from the database and never a charge.
describe('a NUL character in a path id', () => {
  it('is a 400 (VALIDATION_ERROR; INVALID_SYMBOL for a token) on every route with a path parameter, and nothing is charged', async () => {
    const before = await balanceOf(ctx.database.db, account.accountId);
    const routes = ctx.app.apiRoutes.filter((route) => route.url.includes('/:'));
    expect(routes.length).toBeGreaterThan(12);
    for (const route of routes) {
      const url = route.url.replace(/:(\w+)/g, 'a%00b');
      const response = await ctx.request(account.key, {
        method: route.method as 'GET',
        url,
        ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { payload: {} }),
      });
      expect(response.statusCode, `${route.method} ${route.url}`).toBe(400);
      // A token in the path is refused as the price routes refuse any malformed token.
      const allowed = /:symbol/.test(route.url)
        ? ['VALIDATION_ERROR', 'INVALID_SYMBOL']
        : ['VALIDATION_ERROR'];
      expect(allowed, `${route.method} ${route.url}`).toContain(response.json().code);
    }
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(before);
  });
});
