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
      createdAt: expect.any(String),
      apiKey: { id: account.keyId, permissions: ['account', 'price'], expiresAt: null },
      pricing: {
        priceSingle: '0.01',
        priceBatchBase: '0.05',
        priceBatchPerSymbol: '0.01',
        attestationPerSymbol: '0.005',
        historical: '0.05',
        aiResolve: '0.25',
        priceSchedule: '0.05',
        aiSchedule: '0.50',
        marketsList: '0.05',
        marketDetail: '0.02',
        marketHistory: '0.05',
        marketTrades: '0.02',
        streamMinute: '0.002',
      },
      limits: { maxActiveKeys: 25 },
    });
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(0);
  });
});

describe('the webhook signing secret (it can forge callbacks)', () => {
  it('is not shown to a key with only `account`: GET /account omits it, its routes answer 403', async () => {
    const account = await ctx.createAccount({ permissions: ['account', 'price'] });
    const view = await ctx.request(account.key, { method: 'GET', url: '/api/v1/account' });
    expect(view.statusCode).toBe(200);
    expect(view.json()).not.toHaveProperty('webhookSecret');
    expect(view.body).not.toContain('whsec_');
    for (const [method, url] of [
      ['GET', '/api/v1/account/webhook-secret'],
      ['POST', '/api/v1/account/webhook-secret/rotate'],
    ] as const) {
      const refused = await ctx.request(account.key, { method, url });
      expect(refused.statusCode, url).toBe(403);
      expect(refused.json().code).toBe('PERMISSION_DENIED');
      expect(refused.body).not.toContain('whsec_');
    }
  });

  it('a key with `keys` reads it from GET /account/webhook-secret and GET /account, the same secret', async () => {
    const account = await ctx.createAccount({ permissions: ['keys', 'account'] });
    const secret = await ctx.request(account.key, { method: 'GET', url: '/api/v1/account/webhook-secret' });
    expect(secret.statusCode).toBe(200);
    expect(secret.json()).toEqual({
      requestId: secret.headers['x-request-id'],
      webhookSecret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const view = await ctx.request(account.key, { method: 'GET', url: '/api/v1/account' });
    expect(view.json().webhookSecret).toBe(secret.json().webhookSecret);
    // A key with `keys` alone cannot read GET /account (that takes `account`), but has the secret.
    const keysOnly = await ctx.addKey(account.accountId, ['keys']);
    const alone = await ctx.request(keysOnly.key, { method: 'GET', url: '/api/v1/account/webhook-secret' });
    expect(alone.json().webhookSecret).toBe(secret.json().webhookSecret);
  });
});
