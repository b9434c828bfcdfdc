import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';
import { type Event, event, marketCreated, ndjson, wallet } from './events.js';

let ctx: TestContext;
let account: TestAccount;

const NOW = Date.parse('2026-06-15T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();
const MINUTE = 60_000;

beforeAll(async () => {
  ctx = await createTestContext();
  ctx.clock.set(iso(NOW));
  account = await ctx.createAccount({ balanceUsd: '5.00' });
  // 120 listed markets over 40 creation times (three share each), in three categories and every
  // listed status, plus two drafts.
  const events: Event[] = [];
  const statuses = ['OPEN', 'CLOSED', 'RESOLVING', 'FINALIZED', 'CANCELLED'];
  for (let i = 0; i < 120; i++) {
    const id = `list-${String(i).padStart(3, '0')}`;
    const at = iso(NOW - 10 * 86_400_000 + Math.floor(i / 3) * MINUTE);
    events.push(marketCreated({ id, category: ['crypto', 'sports', 'politics'][i % 3] }, { at }));
    const status = statuses[i % 5];
    if (status !== 'OPEN')
      events.push(event('market.status', iso(NOW - 86_400_000), { marketId: id, status }));
  }
  for (const id of ['draft-1', 'draft-2']) {
    events.push(marketCreated({ id }, { at: iso(NOW - MINUTE) }));
    events.push(event('market.status', iso(NOW - MINUTE), { marketId: id, status: 'DRAFT' }));
  }
  expect(await ingestText(ctx.database.db, ndjson(events))).toMatchObject({ refused: 0 });
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

const get = (url: string) => ctx.request(account.key, { method: 'GET', url: `/api/v1${url}` });

/** The expected order: createdAt newest first, then id. */
function expectedIds(filter: (i: number) => boolean = () => true): string[] {
  const ids = Array.from({ length: 120 }, (_, i) => i).filter(filter);
  return ids
    .sort((a, b) => Math.floor(b / 3) - Math.floor(a / 3) || a - b)
    .map((i) => `list-${String(i).padStart(3, '0')}`);
}

describe('GET /markets', () => {
  it('lists newest first then by id, 50 a page by default, never drafts, at 0.05 each', async () => {
    const before = await balanceOf(ctx.database.db, account.accountId);
    const response = await get('/markets');
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ total: 120, page: 1, pageSize: 50, costUsd: '0.05' });
    expect(body.markets.map((m: { id: string }) => m.id)).toEqual(expectedIds().slice(0, 50));
    expect(body.markets[0]).toEqual({
      id: 'list-117',
      slug: 'list-117',
      title: 'Market list-117',
      description: 'A test market',
      category: 'crypto',
      status: 'RESOLVING',
      resolutionType: 'AI',
      outcomes: [
        { index: 0, label: 'Yes', lastPrice: null, probability: 0.5 },
        { index: 1, label: 'No', lastPrice: null, probability: 0.5 },
      ],
      createdAt: iso(NOW - 10 * 86_400_000 + 39 * MINUTE),
      closesAt: '2026-12-31T00:00:00.000Z',
      sandbox: true,
      // Extension fields (docs/markets.md#list-fields): no trade and no order yet.
      volumeUsd: 0,
      volume24hUsd: 0,
      liquidityUsd: 0,
    });
    expect(typeof body.nextCursor).toBe('string');
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(before - 50_000n);
  });

  it('pages: pageSize 1 and 100, the last partial page, and a page beyond the end', async () => {
    const one = (await get('/markets?pageSize=1&page=3')).json();
    expect(one).toMatchObject({ total: 120, page: 3, pageSize: 1 });
    expect(one.markets.map((m: { id: string }) => m.id)).toEqual([expectedIds()[2]]);
    const hundred = (await get('/markets?pageSize=100')).json();
    expect(hundred.markets).toHaveLength(100);
    const last = (await get('/markets?pageSize=100&page=2')).json();
    expect(last.markets.map((m: { id: string }) => m.id)).toEqual(expectedIds().slice(100));
    const beyond = await get('/markets?page=4');
    expect(beyond.statusCode).toBe(200);
    expect(beyond.json()).toMatchObject({ markets: [], total: 120, page: 4, pageSize: 50, costUsd: '0.05' });
  });

  it('filters by status, by category, and both', async () => {
    const resolving = (await get('/markets?status=RESOLVING&pageSize=100')).json();
    expect(resolving.total).toBe(24);
    expect(resolving.markets.map((m: { id: string }) => m.id)).toEqual(expectedIds((i) => i % 5 === 2));
    const sports = (await get('/markets?category=sports&pageSize=100')).json();
    expect(sports.markets.map((m: { id: string }) => m.id)).toEqual(expectedIds((i) => i % 3 === 1));
    const both = (await get('/markets?category=sports&status=OPEN')).json();
    expect(both).toMatchObject({ total: 8 });
    expect(both.markets.map((m: { id: string }) => m.id)).toEqual(
      expectedIds((i) => i % 3 === 1 && i % 5 === 0),
    );
    expect((await get('/markets?category=Sports')).json().total).toBe(0);
  });

  it('refuses bad paging and unknown statuses with VALIDATION_ERROR, for free', async () => {
    const before = await countEntries(ctx.database.db, account.accountId, 'charge');
    const cases: [string, string][] = [
      ['/markets?pageSize=0', 'query.pageSize'],
      ['/markets?pageSize=101', 'query.pageSize'],
      ['/markets?page=0', 'query.page'],
      ['/markets?page=two', 'query.page'],
      ['/markets?status=DRAFT', 'query.status'],
      ['/markets?status=open', 'query.status'],
      ['/markets?sort=title', 'query.sort'],
    ];
    for (const [url, path] of cases) {
      const response = await get(url);
      expect(response.statusCode, url).toBe(400);
      const body = response.json();
      expect(body).toMatchObject({ code: 'VALIDATION_ERROR', requestId: response.headers['x-request-id'] });
      expect(body.details.problems.map((p: { path: string }) => p.path)).toContain(path);
    }
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(before);
  });

  it('keeps its order when markets are added: new ones take their place, the others keep theirs', async () => {
    const pages = async () => {
      const ids: string[] = [];
      for (let page = 1; page <= 2; page++) {
        const body = (await get(`/markets?pageSize=100&page=${page}`)).json();
        ids.push(...body.markets.map((m: { id: string }) => m.id));
      }
      return ids;
    };
    const before = await pages();
    // One newer than all, one at the same instant as list-003..005 that sorts between them by id.
    await ingestText(
      ctx.database.db,
      ndjson([
        marketCreated({ id: 'list-new' }, { at: iso(NOW) }),
        marketCreated({ id: 'list-004a' }, { at: iso(NOW - 10 * 86_400_000 + MINUTE) }),
      ]),
    );
    const after = await pages();
    expect(after).toHaveLength(122);
    expect(after.filter((id) => id !== 'list-new' && id !== 'list-004a')).toEqual(before);
    expect(after[0]).toBe('list-new');
    expect(after.slice(after.indexOf('list-003'), after.indexOf('list-003') + 4)).toEqual([
      'list-003',
      'list-004',
      'list-004a',
      'list-005',
    ]);
  });
});

describe('GET /markets/:id', () => {
  it('answers by id or slug at 0.02; unknown ids and drafts are 404 NOT_FOUND and free', async () => {
    const before = await balanceOf(ctx.database.db, account.accountId);
    const byId = await get('/markets/list-001');
    expect(byId.statusCode).toBe(200);
    expect(byId.json()).toMatchObject({ id: 'list-001', costUsd: '0.02' });
    await ingestText(ctx.database.db, ndjson([marketCreated({ id: 'sluggy', slug: 'a-readable-slug' })]));
    const bySlug = await get('/markets/a-readable-slug');
    expect(bySlug.json()).toMatchObject({ id: 'sluggy', slug: 'a-readable-slug' });
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(before - 40_000n);

    const charges = await countEntries(ctx.database.db, account.accountId, 'charge');
    for (const id of ['nope', 'draft-1', 'list%00x']) {
      const response = await get(`/markets/${id}`);
      const expected = id.includes('%00') ? 400 : 404;
      expect(response.statusCode, id).toBe(expected);
      if (expected === 404) {
        expect(response.json()).toEqual({
          error: `Market ${id} not found`,
          code: 'NOT_FOUND',
          requestId: response.headers['x-request-id'],
        });
      }
    }
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(charges);
  });

  it('is cached a minute per market for every caller: a change shows only after the minute', async () => {
    const other = await ctx.createAccount({ balanceUsd: '1.00' });
    const trade = (n: number) =>
      event('trade', iso(ctx.clock.now().getTime()), {
        marketId: 'list-002',
        tradeId: `cache-t${n}`,
        outcome: 0,
        price: 5000,
        shares: '1000',
        buyer: wallet('x'),
        seller: wallet('y'),
      });
    const first = (await get('/markets/list-002')).json();
    expect(first.tradingStats.totalTrades).toBe(0);
    await ingestText(ctx.database.db, ndjson([trade(1)]));

    ctx.clock.advance(MINUTE - 1);
    const mine = (await get('/markets/list-002')).json();
    const theirs = (await ctx.request(other.key, { method: 'GET', url: '/api/v1/markets/list-002' })).json();
    const bySlug = (await get('/markets/list-002')).json();
    for (const body of [mine, theirs, bySlug]) {
      expect(body.tradingStats.totalTrades).toBe(0);
      expect(body.computedAt).toBe(first.computedAt);
      expect(body.costUsd).toBe('0.02');
    }
    expect(theirs.requestId).not.toBe(mine.requestId);

    ctx.clock.advance(1);
    const fresh = (await get('/markets/list-002')).json();
    expect(fresh.tradingStats).toMatchObject({ totalTrades: 1, totalVolume: '500', last24hTrades: 1 });
    expect(fresh.computedAt).toBe(iso(Date.parse(first.computedAt) + MINUTE));
  });

  it('a market created after a miss shows at once (unknown markets are not cached)', async () => {
    expect((await get('/markets/brand-new')).statusCode).toBe(404);
    await ingestText(ctx.database.db, ndjson([marketCreated({ id: 'brand-new' })]));
    expect((await get('/markets/brand-new')).statusCode).toBe(200);
  });

  it('is not paid for when the balance is short: 402 and no detail', async () => {
    const poor = await ctx.createAccount({ balanceUsd: '0.01' });
    const response = await ctx.request(poor.key, { method: 'GET', url: '/api/v1/markets/list-001' });
    expect(response.statusCode).toBe(402);
    expect(response.json()).toMatchObject({ code: 'INSUFFICIENT_BALANCE' });
    expect(await balanceOf(ctx.database.db, poor.accountId)).toBe(10_000n);
  });
});
