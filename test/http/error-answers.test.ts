import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { expectLedgerReconciles } from '../helpers/ledger.js';
import { marketCreated, ndjson } from '../markets/events.js';

/**
 * Every error answer is JSON with its content type, in one field order (docs/api.md#errors),
 * whatever route family sends it and whatever serialiser that route uses for its successes.
 */

let ctx: TestContext;
let broke: TestAccount;
let quotaKey: string;

const ORDER = ['error', 'code', 'requestId', 'details', 'symbol', 'maxSymbols'];

function expectOneErrorShape(
  response: { statusCode: number; headers: Record<string, unknown>; body: string },
  where: string,
) {
  expect(response.statusCode, where).toBeGreaterThanOrEqual(400);
  expect(response.headers['content-type'], where).toBe('application/json; charset=utf-8');
  const body = JSON.parse(response.body) as Record<string, unknown>;
  const keys = Object.keys(body);
  expect(keys.slice(0, 3), where).toEqual(['error', 'code', 'requestId']);
  expect(
    keys.map((k) => ORDER.indexOf(k)),
    `${where}: ${keys.join(', ')}`,
  ).toEqual([...keys.map((k) => ORDER.indexOf(k))].sort((a, b) => a - b));
  expect(
    keys.every((k) => ORDER.includes(k)),
    where,
  ).toBe(true);
  expect(body.requestId, where).toBe(response.headers['x-request-id']);
  return body;
}

/** One request of each priced operation that reaches its charge, by route family. */
const PRICED: [string, string, object?][] = [
  ['GET', '/api/v1/markets'],
  ['GET', '/api/v1/markets/err-market'],
  ['GET', '/api/v1/price/SOL'],
  ['POST', '/api/v1/price/batch', { symbols: ['SOL', 'JUP'] }],
];

beforeAll(async () => {
  ctx = await createTestContext();
  expect(await ingestText(ctx.database.db, ndjson([marketCreated({ id: 'err-market' })]))).toMatchObject({
    refused: 0,
  });
  broke = await ctx.createAccount({ balanceUsd: '0.00' });
  const rich = await ctx.createAccount({ balanceUsd: '10.00' });
  const created = await ctx.request(rich.key, {
    method: 'POST',
    url: '/api/v1/keys',
    payload: {
      name: 'no quota left',
      permissions: ['price', 'batch', 'markets'],
      quotas: { dailyRequests: 0 },
    },
  });
  expect(created.statusCode).toBe(200);
  quotaKey = created.json().key;
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

describe('error answers', () => {
  it('402 INSUFFICIENT_BALANCE is JSON in the one field order on every priced route family, markets included', async () => {
    for (const [method, url, payload] of PRICED) {
      const response = await ctx.request(broke.key, {
        method: method as 'GET',
        url,
        ...(payload ? { payload } : {}),
      });
      expect(response.statusCode, url).toBe(402);
      const body = expectOneErrorShape(response, `${method} ${url}`);
      expect(body.code).toBe('INSUFFICIENT_BALANCE');
      expect(Object.keys(body)).toEqual(['error', 'code', 'requestId', 'details']);
    }
  });

  it('429 QUOTA_EXCEEDED is JSON in the one field order on every priced route family, markets included', async () => {
    for (const [method, url, payload] of PRICED) {
      const response = await ctx.request(quotaKey, {
        method: method as 'GET',
        url,
        ...(payload ? { payload } : {}),
      });
      expect(response.statusCode, url).toBe(429);
      const body = expectOneErrorShape(response, `${method} ${url}`);
      expect(body.code).toBe('QUOTA_EXCEEDED');
    }
  });

  it('every other kind of error answer has the same shape, on every API route', async () => {
    const poor = await ctx.createAccount({ balanceUsd: '0.00', permissions: [] as never[] });
    for (const route of ctx.app.apiRoutes) {
      const url = route.url.replace(/:(\w+)/g, 'x');
      const method = route.method as 'GET';
      const where = `${method} ${url}`;
      // 401, 403 (no permission), 400 (an unknown query parameter), 414 (a segment over the limit).
      expectOneErrorShape(await ctx.request(null, { method, url }), `${where} 401`);
      expectOneErrorShape(await ctx.request(poor.key, { method, url }), `${where} 403`);
      expectOneErrorShape(
        await ctx.request(broke.key, { method, url: `${url}?unknownParameter=1` }),
        `${where} 400`,
      );
      if (route.url.includes(':')) {
        const long = route.url.replace(/:(\w+)/g, 'y'.repeat(101));
        const response = await ctx.request(broke.key, { method, url: long });
        expect(response.statusCode, where).toBe(414);
        expectOneErrorShape(response, `${where} 414`);
      }
    }
    expectOneErrorShape(await ctx.request(broke.key, { method: 'GET', url: '/api/v1/no-such-route' }), '404');
    const bad = await ctx.request(broke.key, {
      method: 'POST',
      url: '/api/v1/price/batch',
      headers: { 'content-type': 'application/json' },
      payload: '{"symbols":',
    });
    expect(expectOneErrorShape(bad, 'malformed JSON').code).toBe('VALIDATION_ERROR');
  });
});
