import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { probeRoutes } from '../helpers/probe-routes.js';

/** A key that manages keys cannot make, change or rotate a key looser than itself. */
let ctx: TestContext;
let owner: TestAccount;

beforeAll(async () => {
  ctx = await createTestContext({ extraRoutes: probeRoutes });
  owner = await ctx.createAccount({ balanceUsd: '5.00' });
});
afterAll(async () => {
  await ctx.close();
});

const post = (key: string, url: string, payload?: object) =>
  ctx.request(key, { method: 'POST', url: `/api/v1${url}`, ...(payload ? { payload } : {}) });
const patch = (key: string, id: string, payload: object) =>
  ctx.request(key, { method: 'PATCH', url: `/api/v1/keys/${id}`, payload });

async function managerWith(settings: object) {
  const r = await post(owner.key, '/keys', {
    name: 'manager',
    permissions: ['keys', 'price', 'account'],
    ...settings,
  });
  expect(r.statusCode).toBe(200);
  return r.json() as { id: string; key: string };
}

describe('key managers are bounded by their own limits', () => {
  it('a capped key cannot lift its own quota, nor mint an uncapped key', async () => {
    const capped = await managerWith({ quotas: { dailySpendUsd: '0.02' } });
    for (let i = 0; i < 2; i++) expect((await post(capped.key, '/test/billed', {})).statusCode).toBe(200);
    expect((await post(capped.key, '/test/billed', {})).statusCode).toBe(429);

    const lift = await patch(capped.key, capped.id, { quotas: { dailySpendUsd: null } });
    expect(lift.statusCode).toBe(403);
    expect(lift.json()).toMatchObject({
      code: 'PERMISSION_DENIED',
      details: { looser: ['quotas.dailySpendUsd'] },
    });
    const wider = await post(capped.key, '/keys', { name: 'free', quotas: { dailySpendUsd: '100.00' } });
    expect(wider.json()).toMatchObject({
      code: 'PERMISSION_DENIED',
      details: { looser: ['quotas.dailySpendUsd'] },
    });

    // A key it creates inherits the cap and draws on the same counters: the budget is spent.
    const child = await post(capped.key, '/keys', { name: 'child' });
    expect(child.statusCode).toBe(200);
    expect(child.json().quotas.dailySpendUsd).toBe('0.02');
    expect((await post(child.json().key, '/test/billed', {})).statusCode).toBe(429);
    // Tightening is allowed.
    expect((await patch(capped.key, capped.id, { quotas: { dailySpendUsd: '0.01' } })).statusCode).toBe(200);
  });

  it('an IP- or origin-restricted key cannot drop or widen the lists', async () => {
    const restricted = await managerWith({
      allowedIps: ['127.0.0.0/8'],
      allowedOrigins: ['https://app.example.com'],
    });
    const drop = await patch(restricted.key, restricted.id, { ipRestrictionEnabled: false });
    expect(drop.json()).toMatchObject({ code: 'PERMISSION_DENIED', details: { looser: ['allowedIps'] } });
    const widen = await post(restricted.key, '/keys', { name: 'w', allowedIps: ['0.0.0.0/0'] });
    expect(widen.json().details.looser).toEqual(['allowedIps']);
    const origins = await post(restricted.key, '/keys', {
      name: 'o',
      allowedOrigins: ['https://evil.example'],
    });
    expect(origins.json().details.looser).toEqual(['allowedOrigins']);
    // Narrower lists are fine; by default a new key inherits both lists.
    expect((await post(restricted.key, '/keys', { name: 'n', allowedIps: ['127.0.0.1'] })).statusCode).toBe(
      200,
    );
    const inherited = (await post(restricted.key, '/keys', { name: 'i' })).json();
    expect(inherited).toMatchObject({
      allowedIps: ['127.0.0.0/8'],
      ipRestrictionEnabled: true,
      allowedOrigins: ['https://app.example.com'],
      originRestrictionEnabled: true,
    });
  });

  it('a slow key cannot raise its own rate limit, or rotate a looser key to get its secret', async () => {
    const slow = await managerWith({ rateLimit: { requestsPerSecond: 1, burst: 1000 } });
    const raise = await patch(slow.key, slow.id, { rateLimit: { requestsPerSecond: 100, burst: 1000 } });
    expect(raise.json()).toMatchObject({ details: { looser: ['rateLimit.requestsPerSecond'] } });
    const fast = (await post(owner.key, '/keys', { name: 'fast', permissions: ['price'] })).json();
    const rotate = await post(slow.key, `/keys/${fast.id}/rotate`);
    expect(rotate.statusCode).toBe(403);
    expect(rotate.json().code).toBe('PERMISSION_DENIED');
  });

  it('an expiring key cannot change, rotate or revoke a key that outlives it', async () => {
    const soon = new Date(ctx.clock.now().getTime() + 3_600_000).toISOString();
    const expiring = await managerWith({ expiresAt: soon });
    const forever = (
      await post(owner.key, '/keys', { name: 'forever', permissions: ['price'], allowedIps: ['10.0.0.0/8'] })
    ).json();
    for (const [method, url, payload] of [
      [
        'PATCH',
        `/api/v1/keys/${forever.id}`,
        { ipRestrictionEnabled: false, quotas: { dailySpendUsd: null } },
      ],
      ['PATCH', `/api/v1/keys/${forever.id}`, { expiresAt: soon }],
      ['POST', `/api/v1/keys/${forever.id}/rotate`, undefined],
      ['DELETE', `/api/v1/keys/${forever.id}`, undefined],
    ] as const) {
      const response = await ctx.request(expiring.key, { method, url, ...(payload ? { payload } : {}) });
      expect(response.statusCode, `${method} ${url}`).toBe(403);
      expect(response.json()).toEqual({
        error: 'A key cannot manage a key that outlives it',
        code: 'PERMISSION_DENIED',
        details: { looser: ['expiresAt'] },
        requestId: response.headers['x-request-id'],
      });
    }
    const unchanged = (await ctx.request(owner.key, { method: 'GET', url: '/api/v1/keys' }))
      .json()
      .keys.find((k: { id: string }) => k.id === forever.id);
    expect(unchanged).toMatchObject({ ipRestrictionEnabled: true, isActive: true });
    // Keys that expire with it or sooner are its to manage.
    const child = (await post(expiring.key, '/keys', { name: 'child', permissions: ['price'] })).json();
    expect((await patch(expiring.key, child.id, { name: 'renamed' })).statusCode).toBe(200);
    const longer = await patch(expiring.key, child.id, { expiresAt: null });
    expect(longer.statusCode).toBe(403);
    expect(longer.json()).toMatchObject({ code: 'PERMISSION_DENIED', details: { looser: ['expiresAt'] } });
    expect(
      (await ctx.request(expiring.key, { method: 'DELETE', url: `/api/v1/keys/${child.id}` })).statusCode,
    ).toBe(200);
  });

  it('an expiring key cannot rotate a key that outlives it', async () => {
    const soon = new Date(ctx.clock.now().getTime() + 3_600_000).toISOString();
    const expiring = await managerWith({ expiresAt: soon });
    const forever = (await post(owner.key, '/keys', { name: 'forever', permissions: ['price'] })).json();
    const rotate = await post(expiring.key, `/keys/${forever.id}/rotate`);
    expect(rotate.json()).toMatchObject({ code: 'PERMISSION_DENIED', details: { looser: ['expiresAt'] } });
  });
});
