import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';

let ctx: TestContext;
let owner: TestAccount;

beforeAll(async () => {
  ctx = await createTestContext();
  owner = await ctx.createAccount();
});
afterAll(async () => {
  await ctx.close();
});

const create = async (key: string, payload: object) =>
  (await ctx.request(key, { method: 'POST', url: '/api/v1/keys', payload })).json();
const patch = (key: string, id: string, payload: unknown) =>
  ctx.request(key, { method: 'PATCH', url: `/api/v1/keys/${id}`, payload: payload as object });

describe('PATCH /keys/:keyId', () => {
  it('changes only the fields given, and the change takes effect at once', async () => {
    const target = await create(owner.key, { name: 'bot', permissions: ['price', 'account'] });
    expect((await ctx.request(target.key, { method: 'GET', url: '/api/v1/account' })).statusCode).toBe(200);
    const response = await patch(owner.key, target.id, {
      name: 'renamed bot',
      permissions: ['price'],
      allowedIps: ['192.0.2.0/24'],
      rateLimit: { requestsPerSecond: 5, burst: 10 },
      quotas: { dailyRequests: 1000, monthlySpendUsd: '25.50' },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      id: target.id,
      name: 'renamed bot',
      permissions: ['price'],
      allowedIps: ['192.0.2.0/24'],
      ipRestrictionEnabled: true,
      allowedOrigins: [],
      rateLimit: { requestsPerSecond: 5, burst: 10, isDefault: false },
      quotas: { dailyRequests: 1000, monthlyRequests: null, dailySpendUsd: null, monthlySpendUsd: '25.50' },
      usage: { day: { requests: 0, spendUsd: '0.00' }, month: { requests: 0, spendUsd: '0.00' } },
    });
    // The cached verification was dropped: the narrowed key is refused at once.
    const after = await ctx.request(target.key, { method: 'GET', url: '/api/v1/account' });
    expect(after.statusCode).toBe(403);
    // Nulls reset to defaults / unlimited; omitted fields stay.
    const reset = (
      await patch(owner.key, target.id, { rateLimit: null, quotas: { dailyRequests: null } })
    ).json();
    expect(reset.rateLimit.isDefault).toBe(true);
    expect(reset.quotas).toEqual({
      dailyRequests: null,
      monthlyRequests: null,
      dailySpendUsd: null,
      monthlySpendUsd: '25.50',
    });
    expect(reset.name).toBe('renamed bot');
  });

  it('validates like creation, with every problem named', async () => {
    const target = await create(owner.key, { name: 'v' });
    const response = await patch(owner.key, target.id, {
      name: ' ',
      allowedOrigins: ['nope'],
      rateLimit: { requestsPerSecond: 100000, burst: 5 },
      quotas: { dailySpendUsd: '1.2345678' },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().details.problems).toEqual([
      { path: 'body.name', message: 'must not be blank' },
      { path: 'body.allowedOrigins[0]', message: '"nope" is not an origin like https://app.example.com' },
      { path: 'body.rateLimit.requestsPerSecond', message: 'must be at most 500' },
      {
        path: 'body.quotas.dailySpendUsd',
        message: 'must be a USD amount such as "25.00" (at most 6 decimals)',
      },
    ]);
    for (const body of [
      {},
      { unknown: 1 },
      { rateLimit: { requestsPerSecond: 0, burst: 1 } },
      { quotas: { dailyRequests: -1 } },
    ]) {
      const bad = await patch(owner.key, target.id, body);
      expect(bad.statusCode, JSON.stringify(body)).toBe(400);
      expect(bad.json().code).toBe('VALIDATION_ERROR');
    }
  });

  it('is bounded by the calling key: no wider permissions, no keys more powerful than itself', async () => {
    const manager = await create(owner.key, { name: 'manager', permissions: ['keys', 'price', 'account'] });
    const small = await create(manager.key, { name: 'small', permissions: ['price'] });
    const widen = await patch(manager.key, small.id, { permissions: ['price', 'markets'] });
    expect(widen.statusCode).toBe(403);
    expect(widen.json()).toMatchObject({ code: 'PERMISSION_DENIED', details: { permissions: ['markets'] } });
    expect((await patch(manager.key, small.id, { name: 'ok' })).statusCode).toBe(200);

    // The owner's key has every permission: the manager may not change, rotate or revoke it.
    for (const [method, url] of [
      ['PATCH', `/api/v1/keys/${owner.keyId}`],
      ['POST', `/api/v1/keys/${owner.keyId}/rotate`],
      ['DELETE', `/api/v1/keys/${owner.keyId}`],
    ] as const) {
      const response = await ctx.request(manager.key, {
        method,
        url,
        ...(method === 'PATCH' ? { payload: { allowedIps: ['0.0.0.0/0'] } } : {}),
      });
      expect(response.statusCode, `${method} ${url}`).toBe(403);
      expect(response.json().code).toBe('PERMISSION_DENIED');
    }
  });

  it('refuses revoked keys; other accounts’ keys are NOT_FOUND', async () => {
    const target = await create(owner.key, { name: 'gone' });
    await ctx.request(owner.key, { method: 'DELETE', url: `/api/v1/keys/${target.id}` });
    const revoked = await patch(owner.key, target.id, { name: 'x' });
    expect(revoked.statusCode).toBe(400);
    const stranger = await ctx.createAccount();
    expect((await patch(stranger.key, target.id, { name: 'x' })).statusCode).toBe(404);
  });
});
