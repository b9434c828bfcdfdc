import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';
import { type Event, event, marketCreated, ndjson, wallet } from './events.js';

/**
 * GET /markets with search, sorts, filters and cursors (docs/markets.md#search-and-sort): every
 * order against a reference computed here from the events the test ingested.
 */

let ctx: TestContext;
let account: TestAccount;

const NOW = Date.parse('2026-06-15T12:00:00Z');
const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** A small deterministic generator (mulberry32). */
function rng(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Ref {
  id: string;
  createdAt: number;
  closesAt: number;
  resolutionType: string;
  creator: string;
  notional: bigint;
  notional24h: bigint;
  open: Map<string, bigint>; // order id → open shares × price
  traders: Set<string>;
  holders: Set<string>;
}

const refs = new Map<string, Ref>();
const TYPES = ['AI', 'ADMIN', 'MANUAL_VOTE', 'PRICE_FEED'];
let tradeSeq = 0;

function tradeEvent(
  ref: Ref,
  at: number,
  price: number,
  shares: number,
  buyer: string,
  seller: string,
): Event {
  tradeSeq += 1;
  const notional = BigInt(shares) * BigInt(price);
  ref.notional += notional;
  if (at > NOW - 24 * HOUR) ref.notional24h += notional;
  ref.traders.add(buyer);
  ref.traders.add(seller);
  return event('trade', iso(at), {
    marketId: ref.id,
    tradeId: `st-${tradeSeq}`,
    outcome: tradeSeq % 2,
    price,
    shares: String(shares),
    buyer,
    seller,
  });
}

const volume = (r: Ref) => r.notional / 10_000n;
const volume24h = (r: Ref) => r.notional24h / 10_000n;
const liquidity = (r: Ref) => [...r.open.values()].reduce((a, b) => a + b, 0n) / 10_000n;
const bettors = (r: Ref) => new Set([...r.traders, ...r.holders]).size;

beforeAll(async () => {
  ctx = await createTestContext();
  ctx.clock.set(iso(NOW));
  account = await ctx.createAccount({ balanceUsd: '20.00' });
  const random = rng(36);
  const events: Event[] = [];
  const titles = [
    'Will Bitcoin close above 100k',
    'Bitcoin',
    'Bitcoin ETF approved',
    'Ethereum merge anniversary',
    'Solana validators exceed 2000',
    'Election turnout above sixty percent',
  ];
  for (let i = 0; i < 30; i++) {
    const id = `s-${String(i).padStart(2, '0')}`;
    const createdAt = NOW - 5 * 86_400_000 + Math.floor(i / 4) * HOUR; // four share each instant
    const closesAt = NOW + (1 + ((i * 7) % 13)) * 86_400_000; // ties too
    const resolutionType = TYPES[i % 4] as string;
    const creator = wallet(`creator-${i % 3}`);
    const ref: Ref = {
      id,
      createdAt,
      closesAt,
      resolutionType,
      creator,
      notional: 0n,
      notional24h: 0n,
      open: new Map(),
      traders: new Set(),
      holders: new Set(),
    };
    refs.set(id, ref);
    const resolution =
      resolutionType === 'PRICE_FEED'
        ? { type: 'PRICE_FEED', symbol: 'SOL', condition: 'above', targetPrice: 100, tolerance: 1 }
        : { type: resolutionType };
    events.push(
      marketCreated(
        {
          id,
          title: i < titles.length ? (titles[i] as string) : `Market number ${i}`,
          description: i === 7 ? 'Mentions bitcoin only in the description' : 'A test market',
          category: i % 2 === 0 ? 'crypto' : 'politics',
          outcomes: i === 9 ? ['Bitcoin', 'Gold'] : ['Yes', 'No'],
          closesAt: iso(closesAt),
          creator: { wallet: creator, username: `creator-${i % 3}` },
          resolution,
        },
        { at: iso(createdAt) },
      ),
    );
    // Trades (some older than a day), open orders (some then filled or cancelled), positions.
    const trades = Math.floor(random() * 6);
    for (let t = 0; t < trades; t++) {
      const at = NOW - Math.floor(random() * 72) * HOUR - 1000;
      const price = 100 + Math.floor(random() * 9800);
      const shares = 1 + Math.floor(random() * 5_000_000);
      events.push(
        tradeEvent(ref, at, price, shares, wallet(`b${Math.floor(random() * 8)}`), wallet(`s${t % 3}`)),
      );
    }
    const orders = Math.floor(random() * 4);
    for (let o = 0; o < orders; o++) {
      const orderId = `${id}-o${o}`;
      const price = 100 + Math.floor(random() * 9800);
      const shares = 1 + Math.floor(random() * 3_000_000);
      events.push(
        event('order.placed', iso(NOW - 2 * HOUR), {
          marketId: id,
          orderId,
          wallet: wallet(`m${o}`),
          outcome: o % 2,
          side: o % 2 === 0 ? 'bid' : 'ask',
          price,
          shares: String(shares),
        }),
      );
      ref.open.set(orderId, BigInt(shares) * BigInt(price));
      if (o === 2) {
        events.push(event('order.cancelled', iso(NOW - HOUR), { orderId }));
        ref.open.delete(orderId);
      }
    }
    if (i % 5 === 0) {
      events.push(
        event('position', iso(NOW - HOUR), {
          marketId: id,
          wallet: wallet(`holder-${i}`),
          outcome: 0,
          shares: '10',
          wagered: '5',
        }),
      );
      ref.holders.add(wallet(`holder-${i}`));
    }
  }
  expect(await ingestText(ctx.database.db, ndjson(events))).toMatchObject({ refused: 0 });
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

const get = (url: string) => ctx.request(account.key, { method: 'GET', url: `/api/v1${url}` });

type Key = bigint | number;
/** The reference order: key in the direction asked, ties by id in the same direction (createdAt: id ascending when newest first). */
function expected(
  key: (r: Ref) => Key,
  order: 'asc' | 'desc',
  filter: (r: Ref) => boolean = () => true,
  idFlip = false,
) {
  const sign = order === 'desc' ? -1 : 1;
  const idSign = idFlip ? -sign : sign;
  return [...refs.values()]
    .filter(filter)
    .sort((a, b) => {
      const ka = key(a);
      const kb = key(b);
      if (ka !== kb) return ka < kb ? -sign : sign;
      return a.id < b.id ? -idSign : idSign;
    })
    .map((r) => r.id);
}

/** Every id, walking the list by cursor with the given page size. */
async function walk(query: string, pageSize: number): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const url: string = `/markets?${query}&pageSize=${pageSize}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const response = await get(url);
    expect(response.statusCode, url).toBe(200);
    const body = response.json();
    if (cursor) expect(body.page).toBeNull();
    ids.push(...body.markets.map((m: { id: string }) => m.id));
    cursor = body.nextCursor;
    pages += 1;
  } while (cursor);
  return { ids, pages };
}

describe('GET /markets sorts', () => {
  const cases: [string, (r: Ref) => Key, 'asc' | 'desc', boolean][] = [
    ['createdAt', (r) => r.createdAt, 'desc', true],
    ['closesAt', (r) => r.closesAt, 'asc', false],
    ['volume', volume, 'desc', false],
    ['volume24h', volume24h, 'desc', false],
    ['liquidity', liquidity, 'desc', false],
    ['bettors', bettors, 'desc', false],
  ];
  for (const [sort, key, defaultOrder, createdAtTies] of cases) {
    it(`sort=${sort}: default ${defaultOrder}, the reverse with the other order, ties by id; by page and by cursor`, async () => {
      const other = defaultOrder === 'desc' ? 'asc' : 'desc';
      const want = expected(key, defaultOrder, undefined, createdAtTies);
      const byPage = (await get(`/markets?sort=${sort}&pageSize=100`)).json();
      expect(byPage.markets.map((m: { id: string }) => m.id)).toEqual(want);
      expect(byPage).toMatchObject({ total: 30, page: 1, nextCursor: null });
      expect((await walk(`sort=${sort}`, 7)).ids).toEqual(want);
      const reversed = expected(key, other, undefined, createdAtTies);
      expect(reversed).toEqual([...want].reverse());
      expect((await walk(`sort=${sort}&order=${other}`, 4)).ids).toEqual(reversed);
      // Offset pages say the same.
      const second = (await get(`/markets?sort=${sort}&order=${other}&pageSize=10&page=2`)).json();
      expect(second.markets.map((m: { id: string }) => m.id)).toEqual(reversed.slice(10, 20));
    });
  }

  it('the plain list (no new parameter) is the createdAt order, and its nextCursor continues it', async () => {
    const want = expected((r) => r.createdAt, 'desc', undefined, true);
    const first = (await get('/markets?pageSize=9')).json();
    expect(first.markets.map((m: { id: string }) => m.id)).toEqual(want.slice(0, 9));
    expect(first.page).toBe(1);
    const next = (await get(`/markets?pageSize=9&cursor=${first.nextCursor}`)).json();
    expect(next.markets.map((m: { id: string }) => m.id)).toEqual(want.slice(9, 18));
  });

  it('list items carry each outcome’s last price and probability, and volume, 24 h volume and liquidity in USD', async () => {
    const body = (await get('/markets?sort=volume&pageSize=100')).json();
    const solUsd = (await get('/price/SOL')).json().vwapPrice as number;
    for (const item of body.markets) {
      const ref = refs.get(item.id) as Ref;
      const usd = (lamports: bigint) => Math.round((Number(lamports) / 1e9) * solUsd * 1e6) / 1e6;
      expect(item.volumeUsd).toBeCloseTo(usd(volume(ref)), 5);
      expect(item.volume24hUsd).toBeCloseTo(usd(volume24h(ref)), 5);
      expect(item.liquidityUsd).toBeCloseTo(usd(liquidity(ref)), 5);
      const sum = item.outcomes.reduce((a: number, o: { probability: number }) => a + o.probability, 0);
      expect(sum).toBeCloseTo(1, 5);
      const detail = (await get(`/markets/${item.id}`)).json();
      expect(item.outcomes).toEqual(
        detail.outcomes.map(
          (o: { index: number; label: string; lastPrice: number | null; probability: number }) => ({
            index: o.index,
            label: o.label,
            lastPrice: o.lastPrice,
            probability: o.probability,
          }),
        ),
      );
    }
  });
});

describe('GET /markets filters and search', () => {
  it('filters by resolutionType, creator and closing time, with the others', async () => {
    const ids = async (query: string) => (await walk(query, 100)).ids;
    expect(await ids('resolutionType=ADMIN&sort=closesAt')).toEqual(
      expected(
        (r) => r.closesAt,
        'asc',
        (r) => r.resolutionType === 'ADMIN',
      ),
    );
    const creator = wallet('creator-1');
    expect(await ids(`creator=${creator}&sort=volume`)).toEqual(
      expected(volume, 'desc', (r) => r.creator === creator),
    );
    const after = NOW + 3 * 86_400_000;
    const before = NOW + 8 * 86_400_000;
    const window = await ids(
      `closesAfter=${iso(after)}&closesBefore=${iso(before)}&category=crypto&sort=closesAt`,
    );
    expect(window).toEqual(
      expected(
        (r) => r.closesAt,
        'asc',
        (r) => r.closesAt >= after && r.closesAt < before && Number(r.id.slice(2)) % 2 === 0,
      ),
    );
    expect(window.length).toBeGreaterThan(0);
    const total = (await get(`/markets?closesAfter=${iso(after)}&closesBefore=${iso(before)}`)).json().total;
    expect(total).toBe([...refs.values()].filter((r) => r.closesAt >= after && r.closesAt < before).length);
  });

  it('searches title, labels, category and description; the last word as a prefix; an exact title first', async () => {
    const search = async (q: string, extra = '') =>
      (await get(`/markets?q=${encodeURIComponent(q)}${extra}`)).json();
    const bitcoin = await search('bitcoin');
    expect(bitcoin.markets[0].id).toBe('s-01'); // the title is exactly "Bitcoin"
    expect(new Set(bitcoin.markets.map((m: { id: string }) => m.id))).toEqual(
      new Set(['s-00', 's-01', 's-02', 's-07', 's-09']),
    );
    expect(bitcoin.total).toBe(5);
    // Title matches rank above a description-only match.
    const ranks = bitcoin.markets.map((m: { id: string }) => m.id);
    expect(ranks.indexOf('s-07')).toBeGreaterThan(ranks.indexOf('s-02'));
    // Prefix of the last word, case-insensitive, punctuation ignored.
    expect((await search('BITC')).total).toBe(5);
    expect((await search('bitcoin, etf?')).markets.map((m: { id: string }) => m.id)).toEqual(['s-02']);
    expect((await search('bitc etf')).total).toBe(0); // only the last word is a prefix
    expect((await search('politics number')).total).toBeGreaterThan(0);
    expect((await search('zzzz')).markets).toEqual([]);
    // Another sort with a search; a walk by cursor over relevance.
    const byVolume = await search('market', '&sort=volume&pageSize=100');
    expect(byVolume.markets.map((m: { id: string }) => m.id)).toEqual(
      expected(volume, 'desc'), // every market says "market" in its title or description
    );
    const walked = await walk(`q=market`, 3);
    expect(walked.ids).toEqual(
      (await search('market', '&pageSize=100')).markets.map((m: { id: string }) => m.id),
    );
  });

  it('refuses bad input with VALIDATION_ERROR, uncharged', async () => {
    const charges = await countEntries(ctx.database.db, account.accountId, 'charge');
    const first = (await get('/markets?sort=volume&pageSize=5')).json();
    const cursor: string = first.nextCursor;
    const [payload, check] = cursor.split('.') as [string, string];
    const altered = `${Buffer.from(JSON.stringify(['999999999999', 's-00'])).toString('base64url')}.${check}`;
    const cases: [string, string][] = [
      ['/markets?sort=popularity', 'query.sort'],
      ['/markets?order=up', 'query.order'],
      [`/markets?q=${'a'.repeat(500)}`, 'query.q'],
      ['/markets?q=%3F%21...%20--', 'query.q'],
      ['/markets?resolutionType=ORACLE', 'query.resolutionType'],
      ['/markets?creator=not-a-wallet', 'query.creator'],
      ['/markets?closesAfter=tomorrow', 'query.closesAfter'],
      ['/markets?closesAfter=0000-01-01T00:00:00Z', 'query.closesAfter'],
      ['/markets?closesBefore=9999-12-31T23:00:00-05:00', 'query.closesBefore'],
      [`/markets?sort=volume&page=2&cursor=${cursor}`, 'query.cursor'],
      [`/markets?sort=volume&cursor=${altered}`, 'query.cursor'],
      [`/markets?sort=volume&cursor=${payload}.AAAAAAAAAAAAAAAA`, 'query.cursor'],
      [`/markets?sort=liquidity&cursor=${cursor}`, 'query.cursor'],
      [`/markets?sort=volume&order=asc&cursor=${cursor}`, 'query.cursor'],
      [`/markets?sort=volume&category=crypto&cursor=${cursor}`, 'query.cursor'],
      ['/markets?cursor=%%%', 'query.cursor'],
    ];
    for (const [url, path] of cases) {
      const response = await get(url);
      expect(response.statusCode, url).toBe(400);
      const body = response.json();
      expect(body.code, url).toBe('VALIDATION_ERROR');
      expect(
        body.details.problems.map((p: { path: string }) => p.path),
        url,
      ).toContain(path);
    }
    // Not errors: relevance without q ranks every market 0 (so by id), an empty closing window is empty.
    const byId = (await get('/markets?sort=relevance&pageSize=100')).json();
    expect(byId.markets.map((m: { id: string }) => m.id)).toEqual([...refs.keys()].sort().reverse());
    const empty = (await get(`/markets?closesAfter=${iso(NOW + HOUR)}&closesBefore=${iso(NOW)}`)).json();
    expect(empty).toMatchObject({ markets: [], total: 0, nextCursor: null });
    // The same cursor with another page size is the same query.
    expect((await get(`/markets?sort=volume&pageSize=2&cursor=${cursor}`)).statusCode).toBe(200);
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(charges + 4);
  });

  it('charges 0.05 once a page, and refuses without balance (402, no answer)', async () => {
    const before = await balanceOf(ctx.database.db, account.accountId);
    const response = await get('/markets?q=bitcoin&sort=liquidity');
    expect(response.json()).toMatchObject({ costUsd: '0.05' });
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(before - 50_000n);
    const poor = await ctx.createAccount({ balanceUsd: '0.01' });
    const refused = await ctx.request(poor.key, { method: 'GET', url: '/api/v1/markets?q=bitcoin' });
    expect(refused.statusCode).toBe(402);
    expect(refused.json()).toMatchObject({ code: 'INSUFFICIENT_BALANCE' });
    expect(await balanceOf(ctx.database.db, poor.accountId)).toBe(10_000n);
  });
});

describe('GET /markets paging while trades change the sort key', () => {
  it('by cursor: every market whose key did not change is seen once, in order; none is seen twice', async () => {
    const random = rng(7);
    for (const [sort, order] of [
      ['volume', 'desc'],
      ['volume', 'asc'],
      ['volume24h', 'desc'],
      ['bettors', 'desc'],
    ] as const) {
      const seen: string[] = [];
      const changed = new Set<string>();
      let cursor: string | null = null;
      do {
        // Past the list cache's five seconds (a page's statistics may be that old: docs/markets.md#cache).
        ctx.clock.advance(5_000);
        const url: string = `/markets?sort=${sort}&order=${order}&pageSize=4${cursor ? `&cursor=${cursor}` : ''}`;
        const body = (await get(url)).json();
        seen.push(...body.markets.map((m: { id: string }) => m.id));
        cursor = body.nextCursor;
        // Between pages: trades on two random markets, one already seen and one not (when possible).
        const ids = [...refs.keys()];
        const moving = [
          ids[Math.floor(random() * ids.length)],
          ids[Math.floor(random() * ids.length)],
        ] as string[];
        const events = moving.map((id, n) =>
          tradeEvent(
            refs.get(id) as Ref,
            NOW - HOUR,
            100 + Math.floor(random() * 9000),
            1 + Math.floor(random() * 9_000_000),
            wallet(`walker-${seen.length}-${n}`),
            wallet('walker-seller'),
          ),
        );
        for (const id of moving) changed.add(id);
        expect(await ingestText(ctx.database.db, ndjson(events))).toMatchObject({ refused: 0 });
      } while (cursor);
      const unchanged = [...refs.keys()].filter((id) => !changed.has(id));
      for (const id of unchanged)
        expect(
          seen.filter((s) => s === id),
          `${sort} ${order} ${id}`,
        ).toHaveLength(1);
      // Unchanged markets keep their relative order (their keys did not move).
      const key = sort === 'volume' ? volume : sort === 'volume24h' ? volume24h : bettors;
      expect(seen.filter((id) => !changed.has(id))).toEqual(expected(key, order, (r) => !changed.has(r.id)));
      // Keys only grow, so in descending order a changed market moves towards pages already read: never twice.
      if (order === 'desc') expect(new Set(seen).size).toBe(seen.length);
    }
  });
});
