import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { countEntries } from '../helpers/ledger.js';

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});

describe('GET /account', () => {
  it('describes the account of the calling key, for free', async () => {
    const account = await ctx.createAccount({ balanceUsd: '12.345678', permissions: ['account', 'price'] });
    const response = await ctx.request(account.key, { method: 'GET', url: '/api/v1/account' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      requestId: response.headers['x-request-id'],
      id: account.accountId,
      mode: 'sandbox',
      status: 'active',
      walletAddress: null,
      balanceUsd: '12.345678',
      currency: 'USD',
      webhookSecret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      createdAt: expect.any(String),
      apiKey: { id: account.keyId, permissions: ['account', 'price'], expiresAt: null },
      pricing: {
        priceSingle: '0.01',
        priceBatchBase: '0.05',
        priceBatchPerSymbol: '0.01',
        historical: '0.05',
        aiResolve: '0.25',
        priceSchedule: '0.05',
        aiSchedule: '0.50',
        marketsList: '0.05',
        marketDetail: '0.02',
      },
      limits: { maxActiveKeys: 25 },
    });
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(0);
  });
});
