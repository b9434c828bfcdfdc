import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';
import { type Event, event, marketCreated, ndjson, wallet } from './events.js';

/** GET /markets/:id/history and /trades (docs/markets.md#history, #trades) against references computed here. */

let ctx: TestContext;
let account: TestAccount;

const NOW = Date.parse('2026-06-15T12:00:00Z');
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

interface T {
  tradeId: string;
  outcome: number;
  price: number;
  shares: bigint;
  at: number;
}

/** A deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Trades over the last ~4 days: bursts seconds apart, gaps of hours, some sharing a timestamp. */
function makeTrades(marketId: string, seed: number, count: number, endMs: number): T[] {
  const rnd = random(seed);
  const trades: T[] = [];
  let at = endMs - 4 * DAY + Math.floor(rnd() * HOUR);
  for (let i = 0; i < count; i++) {
    const r = rnd();
    at += r < 0.1 ? 0 : r < 0.8 ? Math.floor(rnd() * 5 * MINUTE) : Math.floor(rnd() * 6 * HOUR);
    if (at >= endMs) break;
    trades.push({
      tradeId: `${marketId}-t${String(i).padStart(4, '0')}`,
      outcome: rnd() < 0.6 ? 0 : 1,
      price: 1 + Math.floor(rnd() * 9_999),
      shares: BigInt(1 + Math.floor(rnd() * 1e9)),
      at,
    });
  }
  return trades;
}

const tradeEvent = (marketId: string, t: T): Event =>
  event('trade', iso(t.at), {
    marketId,
    tradeId: t.tradeId,
    outcome: t.outcome,
    price: t.price,
    shares: t.shares.toString(),
    buyer: wallet('buyer'),
    seller: wallet('seller'),
  });

/** Shuffles deterministically: events arrive out of order. */
function shuffled<X>(items: readonly X[], seed: number): X[] {
  const rnd = random(seed);
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [out[i], out[j]] = [out[j] as X, out[i] as X];
  }
  return out;
}

const STEP: Record<string, number> = {
  '1m': MINUTE,
  '5m': 5 * MINUTE,
  '15m': 15 * MINUTE,
  '1h': HOUR,
  '4h': 4 * HOUR,
  '1d': DAY,
};

/** The reference: candles straight from the trades, as docs/markets.md#history states them. */
function reference(trades: readonly T[], outcome: number, step: number, startMs: number, endMs: number) {
  const mine = trades
    .filter((t) => t.outcome === outcome)
    .sort((a, b) => a.at - b.at || (a.tradeId < b.tradeId ? -1 : a.tradeId > b.tradeId ? 1 : 0));
  const first = Math.floor(startMs / step) * step;
  const before = mine.filter((t) => t.at < first);
  let last: number | null = before.length > 0 ? (before[before.length - 1] as T).price : null;
  const candles = [];
  for (let b = first; b < endMs; b += step) {
    const inside = mine.filter((t) => t.at >= b && t.at < b + step);
    if (inside.length > 0) {
      const prices = inside.map((t) => t.price);
      candles.push({
        time: iso(b),
        open: prices[0],
        high: Math.max(...prices),
        low: Math.min(...prices),
        close: prices[prices.length - 1],
        volume: inside.reduce((s, t) => s + t.shares, 0n).toString(),
        trades: inside.length,
      });
      last = prices[prices.length - 1] as number;
    } else if (last !== null) {
      candles.push({ time: iso(b), open: last, high: last, low: last, close: last, volume: '0', trades: 0 });
    }
  }
  return candles;
}

const TRADES = makeTrades('chart', 7, 1_500, NOW);
const RESOLVED = makeTrades('settled', 11, 300, NOW - 2 * DAY);

beforeAll(async () => {
  ctx = await createTestContext();
  ctx.clock.set(iso(NOW));
  account = await ctx.createAccount({ balanceUsd: '20.00' });
  const created = [
    marketCreated({ id: 'chart' }, { at: iso(NOW - 10 * DAY) }),
    marketCreated({ id: 'quiet' }, { at: iso(NOW - 10 * DAY) }),
    marketCreated({ id: 'settled' }, { at: iso(NOW - 10 * DAY) }),
    marketCreated({ id: 'hidden' }, { at: iso(NOW - 10 * DAY) }),
    event('market.status', iso(NOW - 10 * DAY), { marketId: 'hidden', status: 'DRAFT' }),
  ];
  expect(await ingestText(ctx.database.db, ndjson(created))).toMatchObject({ refused: 0 });
  // Out of order: shuffled, in several requests, the latest trades first in one of them.
  const events = shuffled(
    TRADES.map((t) => tradeEvent('chart', t)),
    3,
  );
  for (let i = 0; i < events.length; i += 200) {
    expect(await ingestText(ctx.database.db, ndjson(events.slice(i, i + 200)))).toMatchObject({ refused: 0 });
  }
  const settled = shuffled(
    RESOLVED.map((t) => tradeEvent('settled', t)),
    5,
  );
  expect(await ingestText(ctx.database.db, ndjson(settled))).toMatchObject({ refused: 0 });
  const resolved = event('market.resolved', iso(NOW - 2 * DAY + MINUTE), {
    marketId: 'settled',
    winningOutcomeIndex: 0,
    details: {},
  });
  expect(await ingestText(ctx.database.db, ndjson([resolved]))).toMatchObject({ refused: 0 });
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

const get = (url: string, key = account.key) => ctx.request(key, { method: 'GET', url: `/api/v1${url}` });

describe('GET /markets/:id/history', () => {
  for (const interval of ['1m', '5m', '15m', '1h', '4h', '1d']) {
    it(`matches candles computed from the trades at ${interval}, default range and an explicit one`, async () => {
      const step = STEP[interval] as number;
      for (const outcome of [0, 1]) {
        const response = await get(`/markets/chart/history?interval=${interval}&outcome=${outcome}`);
        expect(response.statusCode).toBe(200);
        const body = response.json();
        expect(body.candles.length).toBeLessThanOrEqual(1000);
        expect(body.endTime).toBe(iso(NOW));
        const startMs = Date.parse(body.startTime);
        expect(startMs % step).toBe(0);
        expect(body.candles).toEqual(reference(TRADES, outcome, step, startMs, NOW));
      }
      // A range in the middle: its first buckets carry the close of the last trade before it.
      const start = NOW - 2 * DAY - 7 * MINUTE;
      const end = Math.min(start + 900 * step, start + (interval === '1m' ? 20 * HOUR : 3 * DAY), NOW);
      const body = (
        await get(`/markets/chart/history?interval=${interval}&startTime=${iso(start)}&endTime=${iso(end)}`)
      ).json();
      expect(body.startTime).toBe(iso(Math.floor(start / step) * step));
      expect(body.candles).toEqual(reference(TRADES, 0, step, start, end));
      expect(body.candles[0].time).toBe(body.startTime);
    });
  }

  it('has no bucket before the first trade, and none at all without trades', async () => {
    const body = (await get('/markets/chart/history?interval=1d&startTime=2026-05-01T00:00:00Z')).json();
    const first = Math.min(...TRADES.filter((t) => t.outcome === 0).map((t) => t.at));
    expect(body.candles[0].time).toBe(iso(Math.floor(first / DAY) * DAY));
    const quiet = (await get('/markets/quiet/history?interval=1m')).json();
    expect(quiet).toMatchObject({ marketId: 'quiet', outcome: 0, interval: '1m', candles: [] });
  });

  it('keeps a resolved market’s history, flat after its last trade', async () => {
    const body = (await get('/markets/settled/history?interval=1h&outcome=1')).json();
    expect(body.candles).toEqual(reference(RESOLVED, 1, HOUR, Date.parse(body.startTime), NOW));
    expect(body.candles.at(-1)).toMatchObject({ volume: '0', trades: 0 });
  });

  it('answers the slug as the id, and a draft or unknown market is 404', async () => {
    expect((await get('/markets/chart/history')).json().marketId).toBe('chart');
    expect((await get('/markets/hidden/history')).statusCode).toBe(404);
    expect((await get('/markets/nope/history')).statusCode).toBe(404);
  });
});

describe('GET /markets/:id/trades', () => {
  const newestFirst = (list: readonly T[]) =>
    [...list].sort((a, b) => b.at - a.at || (a.tradeId < b.tradeId ? 1 : a.tradeId > b.tradeId ? -1 : 0));

  it('pages newest first without repeats or skips, also while new trades arrive', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const body: { trades: { tradeId: string }[]; nextCursor: string | null } = (
        await get(`/markets/chart/trades?limit=97${cursor ? `&cursor=${cursor}` : ''}`)
      ).json();
      seen.push(...body.trades.map((t: { tradeId: string }) => t.tradeId));
      cursor = body.nextCursor;
      if (pages === 2) {
        // Newer trades arrive mid-paging: they belong before the first page, never inside the rest.
        const late = [{ tradeId: 'chart-late', outcome: 0, price: 5000, shares: 10n, at: NOW - MINUTE }];
        await ingestText(ctx.database.db, ndjson(late.map((t) => tradeEvent('chart', t))));
      }
      pages += 1;
    } while (cursor !== null);
    expect(seen).toEqual(newestFirst(TRADES).map((t) => t.tradeId));
  });

  it('filters by outcome and states each trade’s value', async () => {
    const body = (await get('/markets/settled/trades?outcome=1&limit=100')).json();
    const expected = newestFirst(RESOLVED.filter((t) => t.outcome === 1)).slice(0, 100);
    expect(body.trades.map((t: { tradeId: string }) => t.tradeId)).toEqual(expected.map((t) => t.tradeId));
    const first = expected[0] as T;
    expect(body.trades[0]).toMatchObject({
      outcome: 1,
      price: first.price,
      shares: first.shares.toString(),
      valueSol: Number((first.shares * BigInt(first.price)) / 10_000n) / 1e9,
      at: `${iso(first.at).slice(0, -1)}000Z`,
      buyer: wallet('buyer'),
    });
  });

  it('refuses a tampered cursor and one of another query: 400, not charged', async () => {
    const body = (await get('/markets/chart/trades?limit=5&outcome=0')).json();
    const cursor: string = body.nextCursor;
    const charges = await countEntries(ctx.database.db, account.accountId, 'charge');
    const [payload, digest] = cursor.split('.') as [string, string];
    const other = Buffer.from(JSON.stringify(['2026-06-15T00:00:00.000000Z', 'x'])).toString('base64url');
    for (const url of [
      `/markets/chart/trades?outcome=1&cursor=${cursor}`,
      `/markets/chart/trades?cursor=${cursor}`,
      `/markets/settled/trades?outcome=0&cursor=${cursor}`,
      `/markets/chart/trades?outcome=0&cursor=${other}.${digest}`,
      `/markets/chart/trades?outcome=0&cursor=${payload}.${digest.slice(1)}A`,
    ]) {
      const response = await get(url);
      expect(response.statusCode, url).toBe(400);
      expect(response.json(), url).toMatchObject({ code: 'VALIDATION_ERROR' });
    }
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(charges);
    expect((await get(`/markets/chart/trades?outcome=0&limit=50&cursor=${cursor}`)).statusCode).toBe(200);
  });
});

describe('bad input and the money', () => {
  it('answers each bad request with a documented 400, never charged', async () => {
    const before = await balanceOf(ctx.database.db, account.accountId);
    const cases: [string, string][] = [
      ['/markets/chart/history?interval=2m', 'VALIDATION_ERROR'],
      ['/markets/chart/history?interval=1m&startTime=2026-06-13T00:00:00Z', 'VALIDATION_ERROR'],
      [
        '/markets/chart/history?interval=1m&startTime=2026-06-14T12:00:00Z&endTime=2026-06-15T06:00:00Z',
        'VALIDATION_ERROR',
      ],
      [
        '/markets/chart/history?startTime=2026-06-15T00:00:00Z&endTime=2026-06-14T00:00:00Z',
        'VALIDATION_ERROR',
      ],
      ['/markets/chart/history?startTime=2026-07-01T00:00:00Z', 'VALIDATION_ERROR'],
      ['/markets/chart/history?startTime=yesterday', 'INVALID_TIMESTAMP'],
      ['/markets/chart/history?startTime=0000-01-01T00:00:00Z', 'INVALID_TIMESTAMP'],
      ['/markets/chart/history?endTime=9999-12-31T23:00:00-05:00', 'INVALID_TIMESTAMP'],
      ['/markets/chart/history?outcome=2', 'VALIDATION_ERROR'],
      ['/markets/chart/history?outcome=-1', 'VALIDATION_ERROR'],
      ['/markets/chart/history?bucket=1h', 'VALIDATION_ERROR'],
      ['/markets/chart/trades?limit=101', 'VALIDATION_ERROR'],
      ['/markets/chart/trades?limit=0', 'VALIDATION_ERROR'],
      ['/markets/chart/trades?outcome=5', 'VALIDATION_ERROR'],
      ['/markets/chart/trades?cursor=nope', 'VALIDATION_ERROR'],
    ];
    for (const [url, code] of cases) {
      const response = await get(url);
      expect(response.statusCode, url).toBe(400);
      expect(response.json().code, url).toBe(code);
    }
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(before);
  });

  it('charges history 0.05 and trades 0.02, once each; 402 without balance', async () => {
    for (const [url, price] of [
      ['/markets/chart/history', 50_000n],
      ['/markets/chart/trades', 20_000n],
    ] as const) {
      const before = await balanceOf(ctx.database.db, account.accountId);
      const charges = await countEntries(ctx.database.db, account.accountId, 'charge');
      const response = await get(url);
      expect(response.statusCode).toBe(200);
      expect(await balanceOf(ctx.database.db, account.accountId)).toBe(before - price);
      expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(charges + 1);
      const poor = await ctx.createAccount({ balanceUsd: '0.01' });
      const refused = await get(url, poor.key);
      expect(refused.statusCode).toBe(402);
      expect(refused.json()).toMatchObject({ code: 'INSUFFICIENT_BALANCE' });
      expect(await balanceOf(ctx.database.db, poor.accountId)).toBe(10_000n);
    }
  });
});

describe('trade totals (the volume order: docs/markets.md#search-and-sort)', () => {
  it('every market has its totals row, equal to its trades, after out-of-order and repeated events', async () => {
    // Repeats: one event twice (the same id), and trades already recorded under new event ids.
    const once = tradeEvent('chart', TRADES[0] as T);
    await ingestText(ctx.database.db, ndjson([once]));
    await ingestText(ctx.database.db, ndjson([once]));
    await ingestText(ctx.database.db, ndjson(TRADES.slice(0, 20).map((t) => tradeEvent('chart', t))));
    const rows = await ctx.database.db.query<{ id: string; trades: string; notional: string; key: string }>(
      `SELECT m.id, t.trades::text AS trades, t.notional::text AS notional,
              floor(t.notional / 10000)::text AS key
         FROM markets m LEFT JOIN market_trade_totals t ON t.market_id = m.id ORDER BY m.id`,
    );
    const recomputed = await ctx.database.db.query<{ id: string; trades: string; notional: string }>(
      `SELECT m.id, count(x.trade_id)::text AS trades,
              COALESCE(sum(x.shares::numeric * x.price), 0)::text AS notional
         FROM markets m LEFT JOIN market_trades x ON x.market_id = m.id GROUP BY m.id ORDER BY m.id`,
    );
    const expected = (trades: readonly T[]) => {
      const notional = trades.reduce((s, t) => s + t.shares * BigInt(t.price), 0n);
      return { trades: String(trades.length), notional: String(notional), key: String(notional / 10_000n) };
    };
    const none = { trades: '0', notional: '0', key: '0' };
    expect(rows).toEqual([
      { id: 'chart', ...expected(TRADES) },
      { id: 'hidden', ...none },
      { id: 'quiet', ...none },
      { id: 'settled', ...expected(RESOLVED) },
    ]);
    expect(rows.map(({ key: _, ...r }) => r)).toEqual(recomputed);
  });
});

describe('each outcome’s last trade, kept by ingestion (docs/markets.md#outcomes-and-probability)', () => {
  type Last = { market_id: string; outcome_index: number; price: number; trade_id: string };
  const kept = () =>
    ctx.database.db.query<Last>(
      `SELECT market_id, outcome_index, price, trade_id FROM market_outcome_last ORDER BY market_id, outcome_index`,
    );
  const lastPriceOf = async (id: string, outcome: number) =>
    (await get(`/markets/${id}`)).json().outcomes[outcome].lastPrice as number | null;

  it('is the newest trade by (at, trade id) whatever the arrival order, and what the routes show', async () => {
    const newest = (marketId: string, trades: readonly T[]) =>
      [0, 1].flatMap((outcome) => {
        const mine = trades
          .filter((t) => t.outcome === outcome)
          .sort((a, b) => b.at - a.at || (a.tradeId < b.tradeId ? 1 : -1));
        const top = mine[0];
        return top
          ? [{ market_id: marketId, outcome_index: outcome, price: top.price, trade_id: top.tradeId }]
          : [];
      });
    // The trades arrived shuffled, in chunks, with ties in `at` (a tenth of them).
    expect(await kept()).toEqual([...newest('chart', TRADES), ...newest('settled', RESOLVED)]);
    expect(
      await ctx.database.db.query<Last>(
        `SELECT DISTINCT ON (market_id, outcome_index) market_id, outcome_index, price, trade_id
           FROM market_trades ORDER BY market_id, outcome_index, at DESC, trade_id DESC`,
      ),
    ).toEqual(await kept());
    const chart = (await get('/markets/chart')).json();
    expect(chart.outcomes.map((o: { lastPrice: number | null }) => o.lastPrice)).toEqual(
      newest('chart', TRADES).map((l) => l.price),
    );
    expect(await lastPriceOf('quiet', 0)).toBeNull();
  });

  it('a late trade does not replace it; a trade at the same time with a larger id does', async () => {
    const before = (await kept()).find((l) => l.market_id === 'chart' && l.outcome_index === 0) as Last;
    const at = (
      await ctx.database.db.query<{ at: Date }>(
        `SELECT at FROM market_outcome_last WHERE market_id = 'chart' AND outcome_index = 0`,
      )
    )[0]?.at.getTime() as number;
    const late = (tradeId: string, when: number, price: number): T => ({
      tradeId,
      outcome: 0,
      price,
      shares: 5n,
      at: when,
    });
    // Older, and the same time with a smaller id: neither is the last trade.
    await ingestText(
      ctx.database.db,
      ndjson(
        [late('chart-late-a', at - MINUTE, 4_321), late('chart-a', at, 4_322)].map((t) =>
          tradeEvent('chart', t),
        ),
      ),
    );
    expect((await kept()).find((l) => l.market_id === 'chart' && l.outcome_index === 0)).toEqual(before);
    // The same time, a larger id: it is.
    await ingestText(ctx.database.db, ndjson([tradeEvent('chart', late('chart-tz', at, 4_323))]));
    expect((await kept()).find((l) => l.market_id === 'chart' && l.outcome_index === 0)).toEqual({
      ...before,
      price: 4_323,
      trade_id: 'chart-tz',
    });
    ctx.clock.advance(61_000); // past the detail's one-minute cache
    expect(await lastPriceOf('chart', 0)).toBe(4_323);
  });
});
