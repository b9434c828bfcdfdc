import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setAccountStatus } from '../../src/accounts/accounts.js';
import { createContext } from '../../src/context.js';
import {
  CONTENT_SECURITY_POLICY,
  DASHBOARD_BUILD,
  serveDashboard,
} from '../../src/dashboard/routes/static.js';
import { registerErrorHandling } from '../../src/http/errors.js';
import { systemClock } from '../../src/lib/clock.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { DASHBOARD_TEST_CONFIG, DashboardClient } from '../helpers/dashboard.js';

/**
 * Every dashboard endpoint, read from the OpenAPI document they are declared in: the session and
 * Origin rules hold on each; one wallet never reaches another's resources; the same figures as the
 * API; the page itself is served with its caching and CSP.
 */

let ctx: TestContext;
let alice: DashboardClient;
let bob: DashboardClient;
let operations: { method: string; path: string; template: string; cookie: boolean; operation: Operation }[];
/** The API's account routes the dashboard serves too (src/http/account-route.ts), as documented. */
let twins: { method: string; path: string; api: string; dashboard: Operation; apiOperation: Operation }[];
let resolve: (schema: unknown) => unknown;

interface Operation {
  tags: string[];
  security: object[];
  description?: string;
  parameters?: { in: string; name: string; schema: unknown }[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}

beforeAll(async () => {
  ctx = await createTestContext({ config: DASHBOARD_TEST_CONFIG });
  alice = await DashboardClient.listening(ctx.app);
  await alice.signIn();
  bob = new DashboardClient(alice.base);
  await bob.signIn();
  const doc = (await alice.call('GET', '/api/v1/openapi.json')).body as {
    paths: Record<string, Record<string, Operation>>;
    components: { schemas: Record<string, unknown> };
  };
  resolve = (schema) => {
    const ref = (schema as { $ref?: string } | undefined)?.$ref;
    return ref ? resolve(doc.components.schemas[ref.replace('#/components/schemas/', '')]) : schema;
  };
  twins = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).flatMap(([method, operation]) => {
      const api = /^The dashboard's twin of `(\w+) \/api\/v1(\/[^`]*)`/.exec(operation.description ?? '');
      if (!api) return [];
      const apiPath = api[2] as string;
      const apiOperation = doc.paths[`/api/v1${apiPath}`]?.[(api[1] as string).toLowerCase()] as Operation;
      return [
        {
          method: method.toUpperCase(),
          path: path.replace('/dashboard/api/{mode}', ''),
          api: api[0],
          dashboard: operation,
          apiOperation,
        },
      ];
    }),
  );
  operations = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([, operation]) => operation.tags.includes('dashboard'))
      .map(([method, operation]) => ({
        method: method.toUpperCase(),
        path: path.replace('{mode}', 'sandbox').replace(/\{(\w+)\}/g, (_, name) => `probe_${name}`),
        template: path,
        cookie: operation.security.length > 0,
        operation,
      })),
  );
});
afterAll(async () => {
  await ctx.close();
});

describe('every dashboard endpoint', () => {
  it('is documented under /dashboard/api with the dashboard tag: the sign-in ones public, the others by cookie', () => {
    expect(operations.length).toBeGreaterThanOrEqual(25);
    for (const op of operations) expect(op.path.startsWith('/dashboard/api/')).toBe(true);
    expect(
      operations
        .filter((op) => !op.cookie)
        .map((op) => op.path)
        .sort(),
    ).toEqual(['/dashboard/api/auth/challenge', '/dashboard/api/auth/logout', '/dashboard/api/auth/verify']);
  });

  it('without a session → 401 SESSION_EXPIRED, with an API key too; never cached', async () => {
    const account = await ctx.createAccount();
    for (const op of operations.filter((o) => o.cookie)) {
      for (const headers of [{}, { authorization: `Bearer ${account.key}` }] as Record<string, string>[]) {
        const answer = await alice.call(op.method, op.path, {
          cookie: null,
          headers,
          body: op.method === 'GET' ? undefined : {},
        });
        expect(`${op.method} ${op.path} ${answer.status}`).toBe(`${op.method} ${op.path} 401`);
        expect(answer.body).toEqual({
          error: 'Not signed in, or the session ended: sign in with your wallet',
          code: 'SESSION_EXPIRED',
          requestId: answer.headers.get('x-request-id'),
        });
        expect(answer.headers.get('cache-control')).toBe('no-store');
      }
    }
  });

  it('from another origin or site → 403 ORIGIN_NOT_ALLOWED on every one, reads and the market stream too, uncharged', async () => {
    const own = alice.origin;
    const port = Number(new URL(own).port);
    // What a page of another origin sends, a page of the same site on another port included: the
    // browser's own headers, which a page cannot forge.
    const refused: { origin: string | null; site: string | null }[] = [
      { origin: null, site: null },
      { origin: 'https://evil.example', site: null },
      { origin: `http://127.0.0.1:${port + 1}`, site: null },
      { origin: `http://localhost:${port}`, site: null },
      { origin: 'null', site: null },
      { origin: null, site: 'cross-site' },
      { origin: null, site: 'same-site' },
      { origin: `http://127.0.0.1:${port + 1}`, site: 'same-site' },
      { origin: own, site: 'same-site' },
      { origin: own, site: 'cross-site' },
    ];
    const ledger = async () =>
      (await ctx.database.db.query<{ n: bigint }>('SELECT count(*) AS n FROM ledger_entries'))[0]?.n;
    const before = await ledger();
    const stream = operations.find((op) => op.template === '/dashboard/api/{mode}/stream/markets');
    expect(stream).toBeDefined();
    const probes = operations.map((op) => (op === stream ? { ...op, path: `${op.path}?ids=dt-comet` } : op));
    for (const op of probes) {
      const where = `${op.method} ${op.template}`;
      expect(JSON.stringify(op.operation.responses['403'] ?? null), where).toContain('ORIGIN_NOT_ALLOWED');
      for (const { origin, site } of refused) {
        const answer = await alice.call(op.method, op.path, {
          origin,
          site,
          body: op.method === 'GET' ? undefined : {},
        });
        expect(`${where} ${origin} ${site} ${answer.status}`).toBe(`${where} ${origin} ${site} 403`);
        expect(answer.body).toEqual({
          error:
            origin === null && site === null
              ? 'A dashboard request must carry the Origin or the Sec-Fetch-Site header'
              : 'This request comes from another origin than the dashboard’s',
          code: 'ORIGIN_NOT_ALLOWED',
          requestId: answer.headers.get('x-request-id'),
        });
      }
    }
    expect(await ledger()).toBe(before);
    // The dashboard's own page: its Origin, or Sec-Fetch-Site same-origin (a GET carries no Origin)
    // or none (an address typed by the user). The stream is opened in market-twins.test.ts.
    for (const op of probes.filter((o) => o.method === 'GET' && o !== stream)) {
      for (const headers of [
        { origin: own, site: null },
        { origin: null, site: 'same-origin' },
        { origin: null, site: 'none' },
        { origin: own, site: 'same-origin' },
      ]) {
        const answer = await alice.call(op.method, op.path, headers);
        expect(answer.body.code, `${op.method} ${op.path} ${JSON.stringify(headers)}`).not.toBe(
          'ORIGIN_NOT_ALLOWED',
        );
      }
    }
  });

  it('twins each account route of the API at its own path, with its parameters, body and answer', () => {
    expect(twins.length).toBe(38);
    for (const twin of twins) {
      const { dashboard, apiOperation: api } = twin;
      expect(api, twin.api).toBeDefined();
      expect(`${twin.method} ${twin.path}`).toBe(
        twin.path === '/account/webhook-secret'
          ? 'POST /account/webhook-secret'
          : twin.api.split('`')[1]?.replace(' /api/v1', ' '),
      );
      const parameters = (op: Operation) =>
        (op.parameters ?? [])
          .filter((p) => p.name !== 'mode' && p.in !== 'header')
          .map((p) => ({ ...p, schema: resolve(p.schema) }))
          .sort((a, b) => a.name.localeCompare(b.name));
      expect(parameters(dashboard), twin.path).toEqual(parameters(api));
      const body = (op: Operation) => resolve(op.requestBody?.content['application/json']?.schema);
      expect(body(dashboard), twin.path).toEqual(body(api));
      const content = (op: Operation) =>
        op.responses['200']?.content?.['application/json'] ??
        op.responses['200']?.content?.['text/event-stream'];
      const answer = (op: Operation) => (resolve(content(op)?.schema) as { properties: object }).properties;
      expect(answer(dashboard), twin.path).toEqual(answer(api));
    }
  });

  it('a path segment over 100 characters → 414 URI_TOO_LONG on every method and parameter, as documented', async () => {
    const withParameters = operations.filter((op) => op.template.includes('{'));
    expect(withParameters.length).toBeGreaterThanOrEqual(25);
    expect(new Set(withParameters.map((op) => op.method))).toEqual(
      new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']),
    );
    for (const op of withParameters) {
      const where = `${op.method} ${op.template}`;
      expect(JSON.stringify(op.operation.responses['414'] ?? null), where).toContain('URI_TOO_LONG');
      for (const name of op.template.match(/\{\w+\}/g) ?? []) {
        const path = op.template
          .replace(name, 'a'.repeat(101))
          .replace('{mode}', 'sandbox')
          .replace(/\{(\w+)\}/g, (_, other) => `probe_${other}`);
        for (const cookie of [undefined, null]) {
          const answer = await alice.call(op.method, path, {
            cookie,
            body: op.method === 'GET' ? undefined : {},
          });
          expect(`${where} ${name} ${answer.status}`).toBe(`${where} ${name} 414`);
          expect(answer.body, where).toEqual({
            error: 'A segment of the URL path is longer than 100 characters',
            code: 'URI_TOO_LONG',
            requestId: answer.headers.get('x-request-id'),
          });
        }
      }
    }
    for (const op of operations.filter((o) => !o.template.includes('{'))) {
      expect(op.operation.responses['414'], `${op.method} ${op.template}`).toBeUndefined();
    }
    // An unknown dashboard resource is still the API's 404, on GET as on the other methods.
    for (const method of ['GET', 'POST']) {
      const unknown = await alice.call(method, '/dashboard/api/sandbox/no-such-thing', {
        body: method === 'GET' ? undefined : {},
      });
      expect(unknown.status, method).toBe(404);
      expect(unknown.body.code, method).toBe('NOT_FOUND');
    }
  });

  it('refuses a mode that is neither live nor sandbox', async () => {
    const answer = await alice.call('GET', '/dashboard/api/both/overview');
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'VALIDATION_ERROR' });
  });

  it('lists in each {mode} only the modes its operation accepts; another is 400 naming path.mode', async () => {
    const modes = Object.fromEntries(
      operations
        .filter((o) => o.template.startsWith('/dashboard/api/{mode}/'))
        .map((o) => {
          const mode = o.operation.parameters?.find((p) => p.in === 'path' && p.name === 'mode');
          return [`${o.method} ${o.template}`, (resolve(mode?.schema) as { enum?: string[] }).enum];
        }),
    );
    const only = Object.entries(modes).filter(([, list]) => list?.length !== 2);
    expect(Object.fromEntries(only)).toEqual({
      'POST /dashboard/api/{mode}/play-money': ['sandbox'],
      'POST /dashboard/api/{mode}/wallets/challenge': ['live'],
      'POST /dashboard/api/{mode}/wallets': ['live'],
    });
    expect(Object.values(modes).filter((list) => list?.length === 2).length).toBeGreaterThan(20);
    const playMoney = await alice.call('POST', '/dashboard/api/live/play-money');
    expect(playMoney.status).toBe(400);
    expect(playMoney.body).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { problems: [{ path: 'path.mode', allowed: ['sandbox'] }] },
    });
    const link = await alice.call('POST', '/dashboard/api/sandbox/wallets', { body: {} });
    expect(link.status).toBe(400);
    expect(link.body).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: {
        problems: expect.arrayContaining([expect.objectContaining({ path: 'path.mode', allowed: ['live'] })]),
      },
    });
  });

  it('refuses a suspended account as the API does, while the session itself stays readable', async () => {
    const carol = new DashboardClient(alice.base);
    await carol.signIn();
    const session = (await carol.call('GET', '/dashboard/api/auth/session')).body as {
      accounts: { sandbox: { id: string } };
    };
    await setAccountStatus(createContext(ctx.database.db, systemClock), {
      accountId: session.accounts.sandbox.id,
      status: 'suspended',
    });
    const refused = await carol.call('GET', '/dashboard/api/sandbox/overview');
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('ACCOUNT_SUSPENDED');
    expect((await carol.call('POST', '/dashboard/api/sandbox/play-money')).body.code).toBe(
      'ACCOUNT_SUSPENDED',
    );
    expect((await carol.call('GET', '/dashboard/api/live/overview')).status).toBe(200);
    expect((await carol.call('GET', '/dashboard/api/auth/session')).body).toMatchObject({
      accounts: { sandbox: { status: 'suspended' } },
    });
  });
});

describe('one wallet, its own accounts', () => {
  it("never reaches another wallet's keys, jobs, AI requests or deliveries: 404 as for an unknown id", async () => {
    const created = await alice.call('POST', '/dashboard/api/sandbox/keys', { body: { name: 'alice key' } });
    expect(created.status).toBe(200);
    const key = created.body.key as string;
    const keyId = created.body.id as string;
    const job = await ctx.request(key, {
      method: 'POST',
      url: '/api/v1/price/schedule',
      payload: {
        symbol: 'SOL',
        resolutionTimestamp: new Date(ctx.clock.now().getTime() + 3_600_000).toISOString(),
        callbackUrl: 'https://hooks.example.com/sibyl',
      },
    });
    expect(job.statusCode).toBe(200);
    const jobId = job.json().jobId as string;
    const ai = await ctx.request(key, {
      method: 'POST',
      url: '/api/v1/ai/resolve',
      payload: {
        question: 'Will it rain?',
        outcomes: ['Yes', 'No'],
        callbackUrl: 'https://hooks.example.com/sibyl',
      },
    });
    const aiId = ai.json().requestId as string;
    const test = await alice.call('POST', '/dashboard/api/sandbox/webhooks/test', {
      body: { callbackUrl: 'https://127.0.0.1:9/unreachable' },
    });
    const deliveryId = test.body.deliveryId as string;

    expect((await alice.call('GET', `/dashboard/api/sandbox/price/scheduled/${jobId}`)).status).toBe(200);
    const probes: [string, string, string][] = [
      ['GET', `/dashboard/api/sandbox/price/scheduled/${jobId}`, 'JOB_NOT_FOUND'],
      ['POST', `/dashboard/api/sandbox/price/scheduled/${jobId}/cancel`, 'JOB_NOT_FOUND'],
      ['GET', `/dashboard/api/sandbox/ai/scheduled/${jobId}`, 'JOB_NOT_FOUND'],
      ['GET', `/dashboard/api/sandbox/ai/request/${aiId}`, 'NOT_FOUND'],
      ['GET', `/dashboard/api/sandbox/webhooks/deliveries/${deliveryId}`, 'NOT_FOUND'],
      ['POST', `/dashboard/api/sandbox/webhooks/deliveries/${deliveryId}/redeliver`, 'NOT_FOUND'],
      ['PATCH', `/dashboard/api/sandbox/keys/${keyId}`, 'NOT_FOUND'],
      ['POST', `/dashboard/api/sandbox/keys/${keyId}/rotate`, 'NOT_FOUND'],
      ['DELETE', `/dashboard/api/sandbox/keys/${keyId}`, 'NOT_FOUND'],
    ];
    for (const [method, path, code] of probes) {
      const answer = await bob.call(method, path, {
        body: method === 'PATCH' ? { name: 'mine now' } : undefined,
      });
      expect(`${method} ${path} ${answer.status} ${answer.body.code}`).toBe(`${method} ${path} 404 ${code}`);
    }
    // Alice's live account does not hold her sandbox's resources either.
    expect((await alice.call('GET', `/dashboard/api/live/price/scheduled/${jobId}`)).status).toBe(404);
    expect((await bob.call('GET', '/dashboard/api/sandbox/keys')).body.total).toBe(0);
    // Nothing of Alice's changed.
    expect((await ctx.request(key, { method: 'GET', url: '/api/v1/account' })).statusCode).toBe(200);
  });

  it('answers the same figures as the API for keys, ledger, usage, jobs, AI requests and deliveries', async () => {
    const created = await alice.call('POST', '/dashboard/api/sandbox/keys', { body: { name: 'twin' } });
    const key = created.body.key as string;
    await ctx.request(key, { method: 'GET', url: '/api/v1/price/SOL' });
    // Every free GET twin without a path parameter: the same path under /api/v1 and under the
    // session's door (the paid market twins: test/dashboard/market-twins.test.ts).
    const lists = twins.filter(
      (twin) => twin.method === 'GET' && !twin.path.includes('{') && !/^\/(markets|stream)\b/.test(twin.path),
    );
    expect(lists.map((twin) => twin.path).sort()).toEqual([
      '/account/alerts',
      '/account/transactions',
      '/account/usage',
      '/ai/requests',
      '/ai/scheduled',
      '/ai/scorecard',
      '/keys',
      '/price/scheduled',
      '/webhooks/deliveries',
      '/webhooks/endpoints',
    ]);
    for (const { path } of lists) {
      const query = path === '/account/usage' ? '?groupBy=operation' : '';
      const dashboard = `${path}${query}`;
      const { requestId: _a, ...mine } = (await alice.call('GET', `/dashboard/api/sandbox${dashboard}`)).body;
      const { requestId: _b, ...theirs } = (
        await ctx.request(key, { method: 'GET', url: `/api/v1${dashboard}` })
      ).json();
      expect(mine, dashboard).toEqual(theirs);
    }
  });
});

describe('the page', () => {
  it('is served at /dashboard/ with a strict CSP, revalidated; every client route gets it too', async () => {
    const moved = await alice.call('GET', '/dashboard', { cookie: null });
    expect(moved.status).toBe(200); // fetch follows the 301 to /dashboard/
    for (const path of ['/dashboard/', '/dashboard/live/keys', '/dashboard/sandbox/usage']) {
      const page = await alice.call('GET', path, { cookie: null });
      expect(page.status, path).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.text).toContain('<div id="app"></div>');
      expect(page.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
      expect(page.headers.get('cache-control')).toBe('no-cache');
      expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('serves its hashed assets compressed and cached for a year; a missing file or API route is a 404', async () => {
    const page = (await alice.call('GET', '/dashboard/', { cookie: null })).text;
    const script = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(page)?.[1] as string;
    expect(script).toBeDefined();
    const raw = await fetch(`${alice.base}${script}`, { headers: { 'accept-encoding': 'br' } });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-encoding')).toBe('br');
    expect(raw.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(raw.headers.get('content-type')).toMatch(/javascript/);
    for (const path of ['/dashboard/assets/missing-abcdefgh.js', '/dashboard/api/nothing-here']) {
      const missing = await alice.call('GET', path, { cookie: null });
      expect(missing.status, path).toBe(404);
      expect(missing.body.code).toBe('NOT_FOUND');
    }
    expect((await alice.call('POST', '/dashboard/api/nothing-here', { body: {} })).status).toBe(404);
  });

  it('says how to build it when it was not built, and the API still runs', async () => {
    const app = Fastify();
    registerErrorHandling(app);
    const empty = mkdtempSync(join(tmpdir(), 'sibyl-dashboard-'));
    try {
      await serveDashboard(app, empty);
      const answer = await app.inject({ method: 'GET', url: '/dashboard/' });
      expect(answer.statusCode).toBe(503);
      expect(answer.json()).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
      writeFileSync(join(empty, 'index.html'), '<p>built</p>');
      const built = Fastify();
      registerErrorHandling(built);
      await serveDashboard(built, empty);
      expect((await built.inject({ method: 'GET', url: '/dashboard/anything' })).body).toBe('<p>built</p>');
    } finally {
      rmSync(empty, { recursive: true, force: true });
      await app.close();
    }
    // The workspace's build beside src/, wherever the module that names it sits.
    expect(DASHBOARD_BUILD).toBe(fileURLToPath(new URL('../../dashboard/dist/', import.meta.url)));
  });
});
