import type { OutgoingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setAccountStatus } from '../../src/accounts/accounts.js';
import { createContext } from '../../src/context.js';
import type { ApiRouteInfo } from '../../src/http/route.js';
import { generateKey } from '../../src/keys/format.js';
import { revokeKey } from '../../src/keys/keys.js';
import { PERMISSIONS } from '../../src/keys/permissions.js';
import { systemClock } from '../../src/lib/clock.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { balanceOf } from '../helpers/ledger.js';
import { probeRoutes } from '../helpers/probe-routes.js';

/**
 * The shared security cases, written once and run against every API route the app declares, so a
 * new route is covered the moment it exists. None of them may cost anything.
 */

let ctx: TestContext;
let routes: ApiRouteInfo[];
let valid: TestAccount;
let suspended: TestAccount;
let expiredKey: string;
let revokedKey: string;

beforeAll(async () => {
  ctx = await createTestContext({ extraRoutes: probeRoutes });
  routes = ctx.app.apiRoutes;
  valid = await ctx.createAccount({ balanceUsd: '5.00' });
  suspended = await ctx.createAccount({ balanceUsd: '5.00' });
  await setAccountStatus(createContext(ctx.database.db, systemClock), {
    accountId: suspended.accountId,
    status: 'suspended',
  });
  const soon = new Date(ctx.clock.now().getTime() + 60_000);
  expiredKey = (await ctx.addKey(valid.accountId, PERMISSIONS, soon)).key;
  const revoked = await ctx.addKey(valid.accountId);
  await revokeKey(createContext(ctx.database.db, ctx.clock), {
    actor: { accountId: valid.accountId, permissions: PERMISSIONS, expiresAt: null },
    keyId: revoked.record.id,
  });
  revokedKey = revoked.key;
  ctx.clock.advance(120_000);
});

afterAll(async () => {
  await ctx.close();
});

function concrete(url: string): string {
  return url.replace(/:(\w+)/g, 'probe_$1');
}

const KEY_IN_URL =
  'API keys are not accepted in the URL, where logs and browser histories keep them: send the header Authorization: Bearer <key>, and replace this key, which has leaked';
const unknownKey = generateKey('live').key;
const badChecksum = (() => {
  const k = generateKey('live').key;
  return k.slice(0, -1) + (k.endsWith('A') ? 'B' : 'A');
})();

const cases: {
  name: string;
  auth: () => string | string[] | null;
  query?: () => string;
  status: number;
  code: string;
  error?: string;
}[] = [
  { name: 'no key', auth: () => null, status: 401, code: 'INVALID_API_KEY' },
  { name: 'not a bearer token', auth: () => 'Basic dXNlcjpwYXNz', status: 401, code: 'INVALID_API_KEY' },
  { name: 'malformed key', auth: () => 'Bearer pk_live_short', status: 401, code: 'INVALID_API_KEY' },
  { name: 'bad checksum', auth: () => `Bearer ${badChecksum}`, status: 401, code: 'INVALID_API_KEY' },
  { name: 'unknown key', auth: () => `Bearer ${unknownKey}`, status: 401, code: 'INVALID_API_KEY' },
  { name: 'expired key', auth: () => `Bearer ${expiredKey}`, status: 401, code: 'API_KEY_EXPIRED' },
  { name: 'revoked key', auth: () => `Bearer ${revokedKey}`, status: 401, code: 'API_KEY_REVOKED' },
  {
    name: 'two Authorization headers',
    auth: () => [`Bearer ${valid.key}`, `Bearer ${valid.key}`],
    status: 401,
    code: 'INVALID_API_KEY',
    error: 'Send exactly one Authorization header',
  },
  {
    name: 'a valid key, and the key in the query string too',
    auth: () => `Bearer ${valid.key}`,
    query: () => `?api_key=${valid.key}`,
    status: 401,
    code: 'INVALID_API_KEY',
    error: KEY_IN_URL,
  },
  {
    name: 'the key in the query string only',
    auth: () => null,
    query: () => `?key=${encodeURIComponent(valid.key)}`,
    status: 401,
    code: 'INVALID_API_KEY',
    error: KEY_IN_URL,
  },
  {
    name: 'suspended account',
    auth: () => `Bearer ${suspended.key}`,
    status: 403,
    code: 'ACCOUNT_SUSPENDED',
  },
];

describe('every API route refuses bad credentials, for free', () => {
  it('declares a meaningful set of routes', () => {
    expect(routes.length).toBeGreaterThanOrEqual(5);
    for (const route of routes) expect([...PERMISSIONS, 'any']).toContain(route.permission);
  });

  for (const c of cases) {
    it(`${c.name} → ${c.status} ${c.code} on every route`, async () => {
      const before = await balanceOf(ctx.database.db, valid.accountId);
      for (const route of routes) {
        const authorization = c.auth();
        const response = await ctx.app.inject({
          method: route.method as 'GET',
          url: concrete(route.url) + (c.query?.() ?? ''),
          headers: (authorization
            ? { authorization, 'content-type': 'application/json' }
            : {}) as OutgoingHttpHeaders,
          ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { payload: '{}' }),
        });
        expect({ route: `${route.method} ${route.url}`, status: response.statusCode }).toEqual({
          route: `${route.method} ${route.url}`,
          status: c.status,
        });
        const body = response.json();
        expect(body).toEqual({
          error: c.error ?? expect.any(String),
          code: c.code,
          requestId: response.headers['x-request-id'],
        });
      }
      expect(await balanceOf(ctx.database.db, valid.accountId)).toBe(before);
    });
  }

  it('a key without the route’s permission → 403 PERMISSION_DENIED on every route', async () => {
    const before = await balanceOf(ctx.database.db, valid.accountId);
    for (const route of routes.filter((r) => r.permission !== 'any')) {
      const others = PERMISSIONS.filter((p) => p !== route.permission);
      const { key } = await ctx.addKey(valid.accountId, others);
      const response = await ctx.app.inject({
        method: route.method as 'GET',
        url: concrete(route.url),
        headers: { authorization: `Bearer ${key}` },
      });
      expect(`${route.method} ${route.url} ${response.statusCode}`).toBe(`${route.method} ${route.url} 403`);
      expect(response.json()).toEqual({
        error: `This API key lacks the "${route.permission}" permission`,
        code: 'PERMISSION_DENIED',
        details: { required: route.permission },
        requestId: response.headers['x-request-id'],
      });
      // Keep under the active-key cap.
      await ctx.database.db.query('UPDATE api_keys SET revoked_at = now() WHERE key_prefix = $1', [
        key.slice(0, 16),
      ]);
    }
    expect(await balanceOf(ctx.database.db, valid.accountId)).toBe(before);
  });

  it('a route open to any key answers a key holding any one permission (not 403)', async () => {
    const open = routes.filter((r) => r.permission === 'any');
    expect(open.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /api/v1/ai/scorecard']);
    for (const route of open) {
      for (const permission of PERMISSIONS) {
        const { key } = await ctx.addKey(valid.accountId, [permission]);
        const response = await ctx.app.inject({
          method: route.method as 'GET',
          url: concrete(route.url),
          headers: { authorization: `Bearer ${key}` },
        });
        // Nothing is published on this database: the route's own answer, not PERMISSION_DENIED.
        expect(`${permission} ${response.statusCode} ${response.json().code}`).toBe(
          `${permission} 404 NOT_FOUND`,
        );
        await ctx.database.db.query('UPDATE api_keys SET revoked_at = now() WHERE key_prefix = $1', [
          key.slice(0, 16),
        ]);
      }
    }
  });
});
