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

interface Problem {
  path: string;
  message: string;
  allowed?: string[];
}

function problemsOf(response: { json(): unknown }): Problem[] {
  return (response.json() as { details: { problems: Problem[] } }).details.problems;
}

describe('consistent validation', () => {
  it('every API route refuses an unknown query parameter by name, and nothing is charged', async () => {
    const before = await balanceOf(ctx.database.db, account.accountId);
    expect(ctx.app.apiRoutes.length).toBeGreaterThan(20);
    for (const route of ctx.app.apiRoutes) {
      const url = `${route.url.replace(/:(\w+)/g, 'SOL')}?bogusParam=1`;
      const response = await ctx.request(account.key, {
        method: route.method as 'GET',
        url,
        ...(route.method === 'GET' ? {} : { payload: {} }),
      });
      expect(response.statusCode, `${route.method} ${route.url}`).toBe(400);
      expect(response.json().code).toBe('VALIDATION_ERROR');
      expect(problemsOf(response), `${route.method} ${route.url}`).toContainEqual({
        path: 'query.bogusParam',
        message: 'is not a known field',
      });
    }
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(before);
  });

  it('names every problem of a request at once, across path, body and query', async () => {
    const response = await ctx.request(account.key, {
      method: 'POST',
      url: '/api/v1/price/batch?verbose=yes',
      payload: { symbols: 'SOL', extra: true },
    });
    expect(response.statusCode).toBe(400);
    const paths = problemsOf(response).map((p) => p.path);
    expect(paths).toEqual(expect.arrayContaining(['body.symbols', 'body.extra', 'query.verbose']));
  });

  it('lists the allowed values of an enumeration, beside the other problems of the query', async () => {
    const response = await ctx.request(account.key, {
      method: 'GET',
      url: '/api/v1/markets?status=SETTLED&pageSize=0',
    });
    expect(response.statusCode).toBe(400);
    const problems = problemsOf(response);
    const status = problems.find((p) => p.path === 'query.status');
    expect(status?.allowed).toEqual(['OPEN', 'CLOSED', 'RESOLVING', 'FINALIZED', 'CANCELLED']);
    expect(status?.message).toBe('must be one of: OPEN, CLOSED, RESOLVING, FINALIZED, CANCELLED');
    expect(problems.map((p) => p.path)).toContain('query.pageSize');
  });

  it('query numbers are decimal text: a fraction or a word for an integer is refused, not rounded', async () => {
    const before = await balanceOf(ctx.database.db, account.accountId);
    for (const query of ['page=1.5', 'page=true', 'pageSize=1e1', 'page=%201', 'page=1&page=2']) {
      const response = await ctx.request(account.key, { method: 'GET', url: `/api/v1/markets?${query}` });
      expect(response.statusCode, query).toBe(400);
      expect(problemsOf(response)[0]?.path, query).toMatch(/^query\.page(Size)?$/);
    }
    const ok = await ctx.request(account.key, { method: 'GET', url: '/api/v1/markets?page=02&pageSize=7' });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ page: 2, pageSize: 7 });
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(before - 50_000n);
  });

  it('every integer query field of the API refuses a fraction, a word and an exponent, not charged', async () => {
    const before = await balanceOf(ctx.database.db, account.accountId);
    const doc = (await ctx.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as {
      paths: Record<
        string,
        Record<string, { parameters?: { name: string; in: string; schema?: { type?: string } }[] }>
      >;
    };
    const tried: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      if (!path.startsWith('/api/v1/')) continue;
      for (const [method, operation] of Object.entries(operations)) {
        for (const parameter of operation.parameters ?? []) {
          if (parameter.in !== 'query' || parameter.schema?.type !== 'integer') continue;
          for (const text of ['1.5', 'true', '1e1']) {
            const url = `${path.replace(/\{\w+\}/g, 'SOL')}?${parameter.name}=${text}`;
            const response = await ctx.request(account.key, { method: method.toUpperCase() as 'GET', url });
            expect(response.statusCode, `${method} ${url}`).toBe(400);
            expect(
              problemsOf(response).map((p) => p.path),
              `${method} ${url}`,
            ).toContain(`query.${parameter.name}`);
          }
          tried.push(`${method} ${path} ${parameter.name}`);
        }
      }
    }
    // The lists whose filters are unions of literals among them (they had read 1.5 as 1).
    expect(tried).toEqual(
      expect.arrayContaining([
        'get /api/v1/account/transactions limit',
        'get /api/v1/ai/scheduled page',
        'get /api/v1/markets page',
      ]),
    );
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(before);
  });

  it('an unknown page-size parameter names the one the route pages with: limit ↔ pageSize, not charged', async () => {
    const before = await balanceOf(ctx.database.db, account.accountId);
    const doc = (await ctx.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
    };
    const tried: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      if (!path.startsWith('/api/v1/')) continue;
      for (const [method, operation] of Object.entries(operations)) {
        const query = (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
        const pagesWith = ['pageSize', 'limit'].find((name) => query.includes(name));
        if (!pagesWith) continue;
        const other = pagesWith === 'limit' ? 'pageSize' : 'limit';
        const url = `${path.replace(/\{\w+\}/g, 'SOL')}?${other}=5`;
        const response = await ctx.request(account.key, { method: method.toUpperCase() as 'GET', url });
        expect(response.statusCode, `${method} ${url}`).toBe(400);
        expect(response.json().code).toBe('VALIDATION_ERROR');
        expect(problemsOf(response), `${method} ${url}`).toContainEqual({
          path: `query.${other}`,
          message: `is not a known field; this route pages with ${pagesWith}`,
        });
        tried.push(`${method} ${path}?${other}`);
      }
    }
    expect(tried).toEqual(
      expect.arrayContaining(['get /api/v1/markets?limit', 'get /api/v1/account/transactions?pageSize']),
    );
    // A route that pages with neither keeps the plain answer.
    const plain = await ctx.request(account.key, { method: 'GET', url: '/api/v1/account?limit=5' });
    expect(problemsOf(plain)).toEqual([{ path: 'query.limit', message: 'is not a known field' }]);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(before);
  });

  it('names problems found by the domain rules with the same path style', async () => {
    const response = await ctx.request(account.key, {
      method: 'POST',
      url: '/api/v1/keys',
      payload: { name: ' ', permissions: ['price'], allowedIps: ['not-an-ip'] },
    });
    expect(response.statusCode).toBe(400);
    expect(problemsOf(response).map((p) => p.path)).toEqual(['body.name', 'body.allowedIps[0]']);
  });
});
