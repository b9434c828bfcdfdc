import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { event, marketCreated, ndjson, wallet } from './events.js';

const TOKEN = 'operator-token-0123456789abcdef';
const URL = '/api/v1/admin/markets/events';

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext({ config: { ADMIN_TOKEN: TOKEN, MARKETS_INGEST_BODY_LIMIT_BYTES: '4096' } });
});
afterAll(async () => {
  await ctx.close();
});

const post = (payload: string | Buffer, headers: Record<string, string> = {}) =>
  ctx.app.inject({
    method: 'POST',
    url: URL,
    payload,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson', ...headers },
  });

async function eventCount(): Promise<bigint> {
  const [row] = await ctx.database.db.query<{ n: bigint }>('SELECT count(*) AS n FROM market_events');
  return row?.n ?? 0n;
}

describe('POST /api/v1/admin/markets/events', () => {
  it('ingests an NDJSON body and answers the counts with the per-line reports', async () => {
    const body = ndjson([
      marketCreated({ id: 'admin-m1' }),
      event('stake', '2026-03-01T12:00:00Z', { marketId: 'admin-m1', wallet: wallet('c'), amount: '10' }),
    ]);
    const response = await post(`${body}{"oops"\n`);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      requestId: response.headers['x-request-id'],
      received: 3,
      applied: 2,
      skipped: 0,
      refused: 1,
      reports: [
        {
          line: 3,
          eventId: null,
          outcome: 'refused',
          reason: 'invalid',
          message: 'event is not valid JSON',
          problems: [{ path: 'event', message: 'is not valid JSON' }],
        },
      ],
      reportsTruncated: false,
    });
    const again = await post(body, { 'content-type': 'application/json; charset=utf-8' });
    expect(again.json()).toMatchObject({ applied: 0, skipped: 2, refused: 0 });
  });

  it('without the token, or with a wrong one or an API key: 401, nothing read or written', async () => {
    const before = await eventCount();
    const account = await ctx.createAccount();
    const line = ndjson([marketCreated({ id: 'admin-unauth' })]);
    for (const authorization of [
      undefined,
      'Bearer wrong-token',
      `Bearer ${TOKEN}x`,
      `Bearer ${account.key}`,
      TOKEN,
    ]) {
      const response = await ctx.app.inject({
        method: 'POST',
        url: URL,
        payload: line,
        headers: { 'content-type': 'application/x-ndjson', ...(authorization ? { authorization } : {}) },
      });
      expect(response.statusCode, String(authorization)).toBe(401);
      expect(response.headers['www-authenticate']).toBe('Bearer');
      expect(response.json()).toEqual({
        error: authorization?.startsWith('Bearer ')
          ? 'The operator token is wrong'
          : 'This operator route needs Authorization: Bearer <ADMIN_TOKEN>',
        code: 'INVALID_API_KEY',
        requestId: response.headers['x-request-id'],
      });
    }
    expect(await eventCount()).toBe(before);
  });

  it('refuses a body over the limit with 413 PAYLOAD_TOO_LARGE, applying none of it', async () => {
    const before = await eventCount();
    const events = Array.from({ length: 40 }, (_, i) => marketCreated({ id: `admin-big-${i}` }));
    const response = await post(ndjson(events));
    expect(response.statusCode).toBe(413);
    expect(response.json()).toEqual({
      error: 'The request body is larger than this service accepts',
      code: 'PAYLOAD_TOO_LARGE',
      requestId: response.headers['x-request-id'],
    });
    expect(await eventCount()).toBe(before);
  });

  it('refuses NUL lines (raw or escaped) by line number and applies the others', async () => {
    const good = ndjson([marketCreated({ id: 'admin-nul' })]);
    const escaped = JSON.stringify(
      event(
        'stake',
        '2026-03-01T12:00:00Z',
        { marketId: 'admin-nul', wallet: wallet('c'), amount: '10', username: 'a\u0000b' },
        'nul-escaped',
      ),
    );
    const raw = `{"id":"nul-raw","type":"stake","at":"2026-03-01T12:00:00Z","marketId":"admin-nul","username":"a\u0000b"}`;
    const response = await post(`${good}${escaped}\n${raw}\n`);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ received: 3, applied: 1, refused: 2 });
    expect(
      body.reports.map((r: { line: number; eventId: string | null; message: string }) => [
        r.line,
        r.eventId,
        r.message,
      ]),
    ).toEqual([
      [2, 'nul-escaped', 'event contains a NUL character'],
      [3, null, 'event contains a NUL character'],
    ]);
    const [row] = await ctx.database.db.query<{ n: bigint }>(
      `SELECT count(*) AS n FROM market_stakes WHERE market_id = 'admin-nul'`,
    );
    expect(row?.n).toBe(0n);
  });

  it('refuses other content types, bytes that are not UTF-8, and an empty body with VALIDATION_ERROR', async () => {
    const cases: [string | Buffer, Record<string, string>, string][] = [
      [ndjson([marketCreated({ id: 'admin-ct' })]), { 'content-type': 'text/csv' }, 'header.content-type'],
      [Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a]), {}, 'body'],
      ['\n\n', {}, 'body'],
    ];
    for (const [payload, headers, path] of cases) {
      const response = await post(payload, headers);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ code: 'VALIDATION_ERROR', details: { problems: [{ path }] } });
    }
  });

  it('is not part of the API reference', async () => {
    const doc = (await ctx.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(Object.keys(doc.paths)).not.toContain(URL);
    expect(Object.keys(doc.paths)).toContain('/api/v1/markets/{id}');
  });
});

describe('without ADMIN_TOKEN', () => {
  it('the route does not exist: 404 like any unknown path', async () => {
    const plain = await createTestContext({ database: ctx.database });
    try {
      const response = await plain.app.inject({
        method: 'POST',
        url: URL,
        payload: ndjson([marketCreated({ id: 'admin-none' })]),
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson' },
      });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({
        error: `No route POST ${URL}`,
        code: 'NOT_FOUND',
        requestId: response.headers['x-request-id'],
      });
    } finally {
      await plain.app.close();
    }
  });
});
