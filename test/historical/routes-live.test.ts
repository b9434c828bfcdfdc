import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { type FakeServer, startFakeServer } from '../helpers/fake-server.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';
import { answerCandles, expectedPrice, type FakeVenue, type FakeVenueState, venueOf } from './fake-venues.js';

/**
 * Historical prices end to end for live accounts: the configured registry builds the real Binance,
 * Coinbase and OKX adapters, pointed at one local server answering like those venues, so query
 * validation, the per-venue gap planning, the candle table, combination and billing are tested
 * together. Requests the fake venues receive are counted to prove what storage saves.
 */

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY0 = Date.parse('2026-06-15T00:00:00Z');
/** The test clock: 12:20, inside the 12:00 bucket. Real time is later, so adapters that judge
 * closed candles by the wall clock see every candle closed; the service's own rule must hold. */
const T0 = DAY0 + 12 * HOUR + 20 * MINUTE;
const hour = (h: number) => DAY0 + h * HOUR;
const iso = (ms: number) => new Date(ms).toISOString();
const ALL: FakeVenue[] = ['binance', 'coinbase', 'okx'];

let ctx: TestContext;
let venues: FakeServer;
let live: TestAccount;
let sandbox: TestAccount;
let successes = 0;
const state: FakeVenueState = { now: () => ctx.clock.now().getTime(), missing: new Set(), override: {} };

beforeAll(async () => {
  venues = await startFakeServer((request) => answerCandles(request, state));
  ctx = await createTestContext({
    config: {
      PRICE_VENUES: 'binance,coinbase,okx',
      BINANCE_BASE_URL: venues.url,
      COINBASE_BASE_URL: venues.url,
      OKX_BASE_URL: venues.url,
      PRICE_VENUE_TIMEOUT_MS: '2000',
    },
  });
  live = await ctx.createAccount({ mode: 'live', balanceUsd: '100.00' });
  sandbox = await ctx.createAccount({ mode: 'sandbox', balanceUsd: '10.00' });
});

afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
  await venues.close();
});

beforeEach(() => {
  ctx.clock.set(new Date(T0));
  state.missing.clear();
  state.override = {};
  venues.requests.length = 0;
});

function history(key: string, symbol: string, query: Record<string, string>) {
  return ctx.request(key, {
    method: 'GET',
    url: `/api/v1/historical/price/${symbol}?${new URLSearchParams(query)}`,
  });
}

/** A request that must succeed, and be charged 0.05. */
async function ok(symbol: string, query: Record<string, string>, key = live.key) {
  const response = await history(key, symbol, query);
  expect(response.statusCode, response.body).toBe(200);
  const body = response.json();
  expect(body.costUsd).toBe('0.05');
  if (key === live.key) successes += 1;
  return body;
}

function calls(venue: FakeVenue): Record<string, string>[] {
  return venues.requests
    .filter((r) => venueOf(r.url.pathname) === venue)
    .map((r) => Object.fromEntries(r.url.searchParams));
}

function points(opens: number[], covered: (openMs: number) => FakeVenue[] = () => ALL, step = HOUR) {
  return opens.map((openMs) => {
    const by = covered(openMs);
    return {
      timestamp: iso(openMs),
      price: expectedPrice(by, openMs, step),
      source: by.join(','),
      sourceCount: by.length,
      isComplete: true,
    };
  });
}

const range = (from: number, to: number, step = HOUR) =>
  Array.from({ length: (to - from) / step }, (_, i) => from + i * step);

async function storedRows(token: string, interval = '1h') {
  return ctx.database.db.query<{ venue: string; open_time: Date; close: number | null }>(
    `SELECT venue, open_time, close FROM venue_candles
      WHERE token_key = $1 AND bucket_interval = $2 ORDER BY open_time, venue`,
    [token, interval],
  );
}

describe('live historical prices', () => {
  it('combines the venues’ candles per bucket, weighted by volume, and stores them', async () => {
    const body = await ok('sol', { startTime: iso(hour(3)), endTime: iso(hour(8)), interval: '1h' });
    expect(body).toEqual({
      requestId: expect.stringMatching(/^req_/),
      symbol: 'SOL',
      interval: '1h',
      startTime: '2026-06-15T03:00:00.000Z',
      endTime: '2026-06-15T08:00:00.000Z',
      dataPoints: points(range(hour(3), hour(8))),
      unavailableSources: [],
      costUsd: '0.05',
      remainingBalanceUsd: expect.any(String),
    });
    expect(calls('binance')).toEqual([
      {
        symbol: 'SOLUSDT',
        interval: '1h',
        startTime: String(hour(3)),
        endTime: String(hour(8) - 1),
        limit: '1000',
      },
    ]);
    expect(calls('okx')).toEqual([{ instId: 'SOL-USDT', bar: '1H', limit: '300', after: String(hour(8)) }]);
    expect(calls('coinbase')).toEqual([{ granularity: '3600', start: iso(hour(3)), end: iso(hour(8)) }]);
    const rows = await storedRows('SOL');
    expect(rows).toHaveLength(15);
    expect(rows.every((r) => r.close !== null)).toBe(true);
  });

  it('the same range again is served from storage without any venue call', async () => {
    const body = await ok('SOL', { startTime: iso(hour(3)), endTime: iso(hour(8)), interval: '1h' });
    expect(venues.requests).toHaveLength(0);
    expect(body.dataPoints).toEqual(points(range(hour(3), hour(8))));
  });

  it('an overlapping range asks each venue only for the buckets it lacks', async () => {
    // 1h is the default interval.
    const body = await ok('SOL', { startTime: iso(hour(1)), endTime: iso(hour(10)) });
    expect(body.dataPoints).toEqual(points(range(hour(1), hour(10))));
    expect(calls('binance').map((c) => [c.startTime, c.endTime])).toEqual([
      [String(hour(1)), String(hour(3) - 1)],
      [String(hour(8)), String(hour(10) - 1)],
    ]);
    expect(calls('okx').map((c) => c.after)).toEqual([String(hour(3)), String(hour(10))]);
    expect(calls('coinbase').map((c) => [c.start, c.end])).toEqual([
      [iso(hour(1)), iso(hour(3))],
      [iso(hour(8)), iso(hour(10))],
    ]);
    venues.requests.length = 0;
    await ok('SOL', { startTime: iso(hour(1)), endTime: iso(hour(10)) });
    expect(venues.requests).toHaveLength(0);
  });

  it('clamps an end after now, never stores the open bucket, and asks for it again each time', async () => {
    const query = { startTime: iso(hour(10)), endTime: iso(T0 + HOUR), interval: '1h' };
    const body = await ok('SOL', query);
    expect(body.endTime).toBe(iso(T0));
    expect(body.dataPoints).toEqual([
      ...points([hour(10), hour(11)]),
      { ...points([hour(12)])[0], isComplete: false },
    ]);
    const stored = (await storedRows('SOL')).map((r) => r.open_time.getTime());
    expect(stored).toContain(hour(11));
    expect(stored).not.toContain(hour(12));

    venues.requests.length = 0;
    await ok('SOL', query);
    expect(calls('binance').map((c) => [c.startTime, c.endTime])).toEqual([
      [String(hour(12)), String(T0 - 1)],
    ]);
    expect(calls('okx').map((c) => c.after)).toEqual([String(T0)]);
    expect(calls('coinbase').map((c) => [c.start, c.end])).toEqual([[iso(hour(12)), iso(T0)]]);

    // Once the bucket has closed it is stored like the others, and no longer asked for.
    ctx.clock.set(new Date(hour(13) + 5 * MINUTE));
    await ok('SOL', { startTime: iso(hour(10)), endTime: iso(hour(13)) });
    expect((await storedRows('SOL')).filter((r) => r.open_time.getTime() === hour(12))).toHaveLength(3);
    venues.requests.length = 0;
    await ok('SOL', { startTime: iso(hour(10)), endTime: iso(hour(13)) });
    expect(venues.requests).toHaveLength(0);
  });

  it('omits buckets no venue covers, and remembers what each venue lacks', async () => {
    for (const t of [hour(4), hour(5)]) state.missing.add(`coinbase:${t}`);
    for (const v of ALL) state.missing.add(`${v}:${hour(6)}`);
    const query = { startTime: iso(hour(2)), endTime: iso(hour(8)), interval: '1h' };
    const covered = (t: number): FakeVenue[] => (t === hour(4) || t === hour(5) ? ['binance', 'okx'] : ALL);
    const expected = points([hour(2), hour(3), hour(4), hour(5), hour(7)], covered);
    expect((await ok('ETH', query)).dataPoints).toEqual(expected);

    const markers = (await storedRows('ETH')).filter((r) => r.close === null);
    expect(markers.map((r) => `${r.venue}@${r.open_time.getUTCHours()}`)).toEqual([
      'coinbase@4',
      'coinbase@5',
      'binance@6',
      'coinbase@6',
      'okx@6',
    ]);
    // The venues now have those buckets; they are not asked again.
    state.missing.clear();
    venues.requests.length = 0;
    expect((await ok('ETH', query)).dataPoints).toEqual(expected);
    expect(venues.requests).toHaveLength(0);
  });

  it('does not remember a just-closed bucket as empty: the venue may publish it late', async () => {
    // At 12:20, 1m buckets up to 12:17 closed at least 2 minutes ago; 12:18 closed 1 minute ago.
    for (const v of ALL) for (const m of [17, 18]) state.missing.add(`${v}:${hour(12) + m * MINUTE}`);
    const query = {
      startTime: iso(hour(12) + 10 * MINUTE),
      endTime: iso(hour(12) + 19 * MINUTE),
      interval: '1m',
    };
    const body = await ok('BTC', query);
    expect(body.dataPoints.map((p: { timestamp: string }) => p.timestamp.slice(11, 16))).toEqual([
      '12:10',
      '12:11',
      '12:12',
      '12:13',
      '12:14',
      '12:15',
      '12:16',
    ]);
    const markers = (await storedRows('BTC', '1m')).filter((r) => r.close === null);
    expect(new Set(markers.map((r) => r.open_time.getUTCMinutes()))).toEqual(new Set([17]));
    venues.requests.length = 0;
    await ok('BTC', query);
    expect(calls('binance').map((c) => c.startTime)).toEqual([String(hour(12) + 18 * MINUTE)]);
  });

  it('a failing venue’s buckets are not marked: a later request asks it again', async () => {
    state.override.okx = () => ({
      body: { code: '50001', msg: 'Service temporarily unavailable', data: [] },
    });
    const query = { startTime: iso(hour(2)), endTime: iso(hour(6)), interval: '1h' };
    const body = await ok('BTC', query);
    expect(body.dataPoints).toEqual(points(range(hour(2), hour(6)), () => ['binance', 'coinbase']));
    expect(body.unavailableSources).toEqual([{ name: 'okx', reason: 'upstream_error' }]);
    expect((await storedRows('BTC')).filter((r) => r.venue === 'okx')).toEqual([]);

    state.override = {};
    venues.requests.length = 0;
    const again = await ok('BTC', query);
    expect(again.dataPoints).toEqual(points(range(hour(2), hour(6))));
    expect(again.unavailableSources).toEqual([]);
    expect(calls('binance')).toEqual([]);
    expect(calls('coinbase')).toEqual([]);
    expect(calls('okx').map((c) => c.after)).toEqual([String(hour(6))]);
  });

  it('every venue failing → 503 PRICE_UNAVAILABLE, not charged, nothing stored', async () => {
    const charges = await countEntries(ctx.database.db, live.accountId, 'charge');
    state.override = {
      binance: () => ({
        status: 451,
        body: { code: 0, msg: 'Service unavailable from a restricted location' },
      }),
      coinbase: () => ({ status: 503, body: { message: 'down' } }),
      okx: () => ({
        status: 429,
        headers: { 'retry-after': '1' },
        body: { code: '50011', msg: 'Too Many Requests' },
      }),
    };
    const response = await history(live.key, 'JUP', { startTime: iso(hour(2)), endTime: iso(hour(6)) });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({
      error: 'No price source could give history for JUP right now; retry shortly',
      code: 'PRICE_UNAVAILABLE',
      details: {
        unavailableSources: [
          { name: 'binance', reason: 'geo_blocked' },
          { name: 'coinbase', reason: 'http_error' },
          { name: 'okx', reason: 'rate_limited' },
        ],
      },
      requestId: response.headers['x-request-id'],
    });
    expect(await countEntries(ctx.database.db, live.accountId, 'charge')).toBe(charges);
    expect(await storedRows('JUP')).toEqual([]);
  });

  it('venues that answer without any candle → 200 with no data points, charged, remembered', async () => {
    const query = { startTime: iso(hour(1)), endTime: iso(hour(4)) };
    for (const v of ALL) for (const h of [1, 2, 3]) state.missing.add(`${v}:${hour(h)}`);
    const body = await ok('USDC', query);
    expect(body.dataPoints).toEqual([]);
    expect(body.unavailableSources).toEqual([]);
    // USDC has no Coinbase product: two venues, three markers each.
    expect((await storedRows('USDC')).map((r) => [r.venue, r.close])).toHaveLength(6);
    venues.requests.length = 0;
    expect((await ok('USDC', query)).dataPoints).toEqual([]);
    expect(venues.requests).toHaveLength(0);
  });

  it('every venue saying it does not list the token → 404 SYMBOL_NOT_FOUND, not charged', async () => {
    const charges = await countEntries(ctx.database.db, live.accountId, 'charge');
    state.override = {
      binance: () => ({ status: 400, body: { code: -1121, msg: 'Invalid symbol.' } }),
      coinbase: () => ({ status: 404, body: { message: 'NotFound' } }),
      okx: () => ({
        body: {
          code: '51001',
          msg: "Instrument ID, Instrument ID code, or Spread ID doesn't exist.",
          data: [],
        },
      }),
    };
    const response = await history(live.key, 'PYTH', { startTime: iso(hour(1)), endTime: iso(hour(4)) });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({
      error: 'No price source has 1h history for PYTH',
      code: 'SYMBOL_NOT_FOUND',
      symbol: 'PYTH',
      requestId: response.headers['x-request-id'],
    });
    expect(await countEntries(ctx.database.db, live.accountId, 'charge')).toBe(charges);
    // One venue delisting while others answer is a partial series that names it.
    state.override = { okx: state.override.okx };
    const partial = await ok('PYTH', { startTime: iso(hour(1)), endTime: iso(hour(4)) });
    expect(partial.dataPoints).toEqual(points(range(hour(1), hour(4)), () => ['binance', 'coinbase']));
    expect(partial.unavailableSources).toEqual([{ name: 'okx', reason: 'not_listed' }]);
  });

  it('a 1000-point range is served from storage the second time, without any venue call', async () => {
    const step = 15 * MINUTE;
    const end = DAY0;
    const start = end - 1000 * step;
    const query = { startTime: iso(start), endTime: iso(end), interval: '15m' };
    const first = await ok('BONK', query);
    expect(first.dataPoints).toHaveLength(1000);
    expect(first.dataPoints).toEqual(points(range(start, end, step), () => ALL, step));
    // Each adapter pages within its venue's limit: Binance 1000 per call, OKX and Coinbase 300.
    expect([calls('binance').length, calls('okx').length, calls('coinbase').length]).toEqual([1, 4, 4]);

    venues.requests.length = 0;
    const second = await ok('BONK', query);
    expect(venues.requests).toHaveLength(0);
    expect(second.dataPoints).toEqual(first.dataPoints);
  });

  it('the longest 1h range (30 days, 720 points) is served from storage the second time', async () => {
    const end = hour(0);
    const query = { startTime: iso(end - 30 * 24 * HOUR), endTime: iso(end), interval: '1h' };
    expect((await ok('RAY', query)).dataPoints).toHaveLength(720);
    venues.requests.length = 0;
    expect((await ok('RAY', query)).dataPoints).toHaveLength(720);
    expect(venues.requests).toHaveLength(0);
  });

  it('concurrent requests for the same new range all succeed and store each candle once', async () => {
    const query = { startTime: iso(hour(1)), endTime: iso(hour(9)), interval: '1h' };
    const bodies = await Promise.all(Array.from({ length: 6 }, () => ok('ORCA', query)));
    for (const body of bodies) expect(body.dataPoints).toEqual(points(range(hour(1), hour(9))));
    expect(await storedRows('ORCA')).toHaveLength(8 * 3);
  });

  it('asks only venues that serve the interval (Coinbase has no 4h candles)', async () => {
    const step = 4 * HOUR;
    const body = await ok('SOL', { startTime: iso(hour(-24)), endTime: iso(hour(8)), interval: '4h' });
    expect(body.dataPoints).toEqual(points(range(hour(-24), hour(8), step), () => ['binance', 'okx'], step));
    expect(calls('coinbase')).toEqual([]);
  });

  it('sandbox accounts never reach a live venue or the candle table', async () => {
    const before = await ctx.database.db.query<{ n: bigint }>('SELECT count(*) AS n FROM venue_candles');
    const body = await ok('SOL', { startTime: iso(hour(2)), endTime: iso(hour(6)) }, sandbox.key);
    expect(body.dataPoints).toHaveLength(4);
    expect(body.dataPoints[0].source).toBe('sandbox-alpha,sandbox-beta,sandbox-gamma');
    expect(venues.requests).toHaveLength(0);
    expect(await ctx.database.db.query('SELECT count(*) AS n FROM venue_candles')).toEqual(before);
  });

  it('unknown tokens are 404 and malformed ones 400, for free, without a venue call', async () => {
    const charges = await countEntries(ctx.database.db, live.accountId, 'charge');
    const query = { startTime: iso(hour(2)), endTime: iso(hour(6)) };
    // A well-formed mint outside the registry: no candle venue serves it.
    const mint = 'Fm9rHUTF5v3hwMLbStjZXqNBBoZyGriQaFM6sTFz3K8A';
    const unknownMint = await history(live.key, mint, query);
    expect(unknownMint.statusCode).toBe(404);
    expect(unknownMint.json()).toEqual({
      error: `No price source has 1h history for ${mint}`,
      code: 'SYMBOL_NOT_FOUND',
      symbol: mint,
      requestId: unknownMint.headers['x-request-id'],
    });
    const unknownSymbol = await history(live.key, 'nosuch', query);
    expect(unknownSymbol.json()).toMatchObject({ code: 'SYMBOL_NOT_FOUND', symbol: 'NOSUCH' });
    const invalid = await history(live.key, 'not-a-symbol', query);
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json()).toMatchObject({ code: 'INVALID_SYMBOL' });
    expect(venues.requests).toHaveLength(0);
    expect(await countEntries(ctx.database.db, live.accountId, 'charge')).toBe(charges);
  });

  it('charges exactly 0.05 per successful request and nothing else', async () => {
    expect(await countEntries(ctx.database.db, live.accountId, 'charge')).toBe(successes);
    expect(await balanceOf(ctx.database.db, live.accountId)).toBe(100_000_000n - 50_000n * BigInt(successes));
    const amounts = await ctx.database.db.query<{ amount_micros: bigint; operation: string }>(
      `SELECT DISTINCT amount_micros, operation FROM ledger_entries WHERE account_id = $1 AND kind = 'charge'`,
      [live.accountId],
    );
    expect(amounts).toEqual([{ amount_micros: -50_000n, operation: 'getHistoricalPrice' }]);
  });
});
