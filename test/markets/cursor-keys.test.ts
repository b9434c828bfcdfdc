import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CursorCodec, cursorCodec, fingerprint } from '../../src/http/cursor.js';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { balanceOf, expectLedgerReconciles } from '../helpers/ledger.js';
import { event, marketCreated, ndjson, wallet } from './events.js';

/**
 * The cursors of GET /markets and GET /markets/:id/trades (docs/markets.md#cursors): signed with the
 * installation's key, so a cursor made by anyone else is refused, and range-checked, so that even one
 * made with the key never reaches SQL with a value its casts refuse (a 500). Another app on the same
 * database accepts the first one's cursors.
 */

let ctx: TestContext;
let account: TestAccount;
let codec: CursorCodec;

const IDS = ['ck-a', 'ck-b', 'ck-c', 'ck-d', 'ck-e'];

beforeAll(async () => {
  ctx = await createTestContext();
  account = await ctx.createAccount({ balanceUsd: '100.00' });
  const events = IDS.map((id, i) =>
    marketCreated({ id, title: `Cursor market ${id}` }, { at: `2026-03-0${i + 1}T10:00:00Z` }),
  );
  for (let i = 0; i < 5; i++) {
    events.push(
      event('trade', `2026-03-10T10:00:0${i}Z`, {
        marketId: 'ck-a',
        tradeId: `ck-t${i}`,
        outcome: 0,
        price: 5000,
        shares: '1000',
        buyer: wallet('buyer'),
        seller: wallet('seller'),
      }),
    );
  }
  expect(await ingestText(ctx.database.db, ndjson(events))).toMatchObject({ refused: 0 });
  const [row] = await ctx.database.db.query<{ value: string }>(
    "SELECT value FROM instance_settings WHERE name = 'cursor_key'",
  );
  codec = cursorCodec(Buffer.from(row?.value ?? '', 'base64'));
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

const get = (url: string, c: TestContext = ctx) =>
  c.request(account.key, { method: 'GET', url: `/api/v1${url}` });

/** The fingerprints the routes bind their cursors to (search/query.ts, series/trades.ts). */
const listPrint = (sort: string, order: string, q?: string) =>
  fingerprint(['markets', null, null, q ?? null, q ?? null, null, null, null, null, sort, order]);
const tradesPrint = (marketId: string) => fingerprint(['trades', marketId, null]);

/** A cursor as the unkeyed digest made them: anyone could compute it. */
function publicDigestCursor(key: string, id: string, print: string): string {
  const payload = Buffer.from(JSON.stringify([key, id])).toString('base64url');
  const check = createHash('sha256').update(payload).update('\u0000').update(print).digest();
  return `${payload}.${check.subarray(0, 12).toString('base64url')}`;
}

async function walk(first: string, c: TestContext = ctx): Promise<string[]> {
  const seen: string[] = [];
  let url: string | null = first;
  while (url !== null) {
    const response = await get(url, c);
    expect(response.statusCode, url).toBe(200);
    const body = response.json();
    seen.push(
      ...(body.markets ?? body.trades).map((x: { id?: string; tradeId?: string }) => x.id ?? x.tradeId),
    );
    const sep = first.includes('?') ? '&' : '?';
    url = body.nextCursor === null ? null : `${first}${sep}cursor=${body.nextCursor}`;
  }
  return seen;
}

async function expectRefused(url: string): Promise<void> {
  const before = await balanceOf(ctx.database.db, account.accountId);
  const response = await get(url);
  expect(response.statusCode, url).toBe(400);
  expect(response.json(), url).toMatchObject({
    code: 'VALIDATION_ERROR',
    details: { problems: [{ path: 'query.cursor' }] },
  });
  expect(await balanceOf(ctx.database.db, account.accountId), url).toBe(before);
}

describe('cursors are the installation’s own', () => {
  it('pages still chain, on the list and on the trades', async () => {
    expect(await walk('/markets?pageSize=2')).toEqual([...IDS].reverse());
    expect(await walk('/markets?pageSize=2&sort=bettors')).toHaveLength(IDS.length);
    expect(await walk('/markets/ck-a/trades?limit=2')).toEqual(['ck-t4', 'ck-t3', 'ck-t2', 'ck-t1', 'ck-t0']);
  });

  it('refuses a cursor computed without the key (the unkeyed digest), whatever its key: 400, not 500', async () => {
    for (const [url, key, print] of [
      ['/markets?pageSize=2', '0000-01-01T00:00:00.000000Z', listPrint('createdAt', 'desc')],
      ['/markets?pageSize=2', '2026-02-30T00:00:00.000000Z', listPrint('createdAt', 'desc')],
      ['/markets?pageSize=2&sort=bettors', '9'.repeat(40), listPrint('bettors', 'desc')],
      ['/markets/ck-a/trades?limit=2', '0000-01-01T00:00:00.000000Z', tradesPrint('ck-a')],
      ['/markets/ck-a/trades?limit=2', '2026-02-30T10:00:00.000000Z', tradesPrint('ck-a')],
    ] as const) {
      await expectRefused(`${url}&cursor=${publicDigestCursor(key, 'ck-a', print)}`);
    }
  });

  it('refuses a cursor made with the key whose key or id is out of range: 400, not 500', async () => {
    const list = (sort: string, key: string, id = 'ck-b', q?: string) => {
      const order = sort === 'closesAt' ? 'asc' : 'desc';
      const cursor = codec.encode({ key, id }, listPrint(sort, order, q));
      return `/markets?pageSize=2&sort=${sort}${q ? `&q=${q}` : ''}&cursor=${cursor}`;
    };
    const trades = (key: string, id = 'ck-t1') =>
      `/markets/ck-a/trades?limit=2&cursor=${codec.encode({ key, id }, tradesPrint('ck-a'))}`;
    // The same cursors in range are pages.
    expect((await get(list('createdAt', '2026-03-03T10:00:00.000000Z'))).statusCode).toBe(200);
    expect((await get(list('relevance', '0.5', 'ck-b', 'cursor'))).statusCode).toBe(200);
    expect((await get(list('bettors', '9223372036854775807'))).statusCode).toBe(200);
    expect((await get(trades('2026-03-10T10:00:02.000000Z'))).statusCode).toBe(200);
    for (const url of [
      list('createdAt', '0000-01-01T00:00:00.000000Z'),
      list('createdAt', '2026-02-30T00:00:00.000000Z'),
      list('closesAt', '2026-04-31T00:00:00.000000Z'),
      list('createdAt', '2026-03-01T24:00:00.000000Z'),
      list('relevance', '1e308', 'ck-b', 'cursor'),
      list('relevance', '1e-400', 'ck-b', 'cursor'),
      list('bettors', '9223372036854775808'),
      list('bettors', '9'.repeat(40)),
      list('createdAt', '2026-03-03T10:00:00.000000Z', 'ck\u0000b'),
      list('createdAt', '2026-03-03T10:00:00.000000Z', ''),
      trades('0000-01-01T00:00:00.000000Z'),
      trades('2026-02-30T10:00:00.000000Z'),
      trades('2026-03-10T10:00:02.000000Z', 'ck\u0000t1'),
    ]) {
      await expectRefused(url);
    }
  });

  it('is kept in the database: another app on it accepts the cursors of the first', async () => {
    const other = await createTestContext({ database: ctx.database });
    try {
      const first = (await get('/markets?pageSize=2')).json();
      const next = await get(`/markets?pageSize=2&cursor=${first.nextCursor}`, other);
      expect(next.statusCode).toBe(200);
      expect(next.json().markets.map((m: { id: string }) => m.id)).toEqual(['ck-c', 'ck-b']);
      expect(await walk('/markets/ck-a/trades?limit=3', other)).toHaveLength(5);
    } finally {
      await other.close();
    }
  });
});
