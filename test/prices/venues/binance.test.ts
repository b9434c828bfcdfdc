import { describe, expect, it } from 'vitest';
import { CANDLE_INTERVALS, VenueError } from '../../../src/prices/types.js';
import { createBinanceVenue } from '../../../src/prices/venues/binance.js';
import type { FakeHandler } from '../../helpers/fake-server.js';
import { signal, target, useVenueServer } from './kit.js';

const SOL = target('SOL');
const MINUTE = 60_000;
/** 2026-03-01T00:00:00Z; the fake clock stands at 00:30:30 on the fourth day. */
const BASE = Date.parse('2026-03-01T00:00:00Z');
const NOW = BASE + 3 * 86_400_000 + 30 * MINUTE + 30_000;

/** Binance's doc sample for /api/v3/ticker/24hr, symbol swapped. */
const TICKER = {
  symbol: 'SOLUSDT',
  priceChange: '-94.99999800',
  priceChangePercent: '-95.960',
  weightedAvgPrice: '0.29628482',
  prevClosePrice: '0.10002000',
  lastPrice: '4.00000200',
  lastQty: '200.00000000',
  bidPrice: '4.00000000',
  bidQty: '100.00000000',
  askPrice: '4.00000200',
  askQty: '100.00000000',
  openPrice: '99.00000000',
  highPrice: '100.00000000',
  lowPrice: '0.10000000',
  volume: '8913.30000000',
  quoteVolume: '15.30000000',
  openTime: 1499783499040,
  closeTime: 1499869899040,
  firstId: 28385,
  lastId: 28460,
  count: 76,
};

/** A kline as Binance sends it; prices encode the bucket's index so order is checkable. */
function kline(openTime: number, step: number): unknown[] {
  const k = (openTime - BASE) / step;
  return [
    openTime,
    (100 + k).toFixed(8),
    (101 + k).toFixed(8),
    (99 + k).toFixed(8),
    (100.5 + k).toFixed(8),
    '10.00000000',
    openTime + step - 1,
    (1000 + k).toFixed(8),
    42,
    '5.00000000',
    '500.00000000',
    '0',
  ];
}

/** Answers /api/v3/klines like Binance: open times in [startTime, endTime], up to now, at most `limit`. */
function klinesHandler(step: number): FakeHandler {
  return ({ url }) => {
    const startTime = Number(url.searchParams.get('startTime'));
    const endTime = Number(url.searchParams.get('endTime'));
    const limit = Number(url.searchParams.get('limit'));
    const rows: unknown[] = [];
    for (
      let t = Math.ceil(startTime / step) * step;
      t <= endTime && t <= NOW && rows.length < limit;
      t += step
    ) {
      rows.push(kline(t, step));
    }
    return { body: rows };
  };
}

const server = useVenueServer();
const answer = server.answer;

// Answers from the local fake venue must never hit the timeout, however loaded the machine; the
// timeout itself is exercised with a venue that never answers.
function venue(timeoutMs = 10_000) {
  return createBinanceVenue({ baseUrl: server.url, timeoutMs }, { now: () => new Date(NOW) });
}

describe('binance quotes', () => {
  it('reads lastPrice, quoteVolume as USD volume and closeTime from the 24h ticker', async () => {
    answer(() => ({ body: TICKER, headers: { 'x-mbx-used-weight-1m': '2' } }));
    const quote = await venue().fetchQuote(SOL, signal);
    expect(quote).toEqual({ price: 4.000002, volume24hUsd: 15.3, timestamp: new Date(1499869899040) });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.url.pathname).toBe('/api/v3/ticker/24hr');
    expect(server.requests[0]?.url.search).toBe('?symbol=SOLUSDT');
  });

  it('returns null for an invalid symbol (HTTP 400, code -1121)', async () => {
    answer(() => ({ status: 400, body: { code: -1121, msg: 'Invalid symbol.' } }));
    expect(await venue().fetchQuote(SOL, signal)).toBeNull();
  });

  it('treats any other 400 as an HTTP error', async () => {
    answer(() => ({ status: 400, body: { code: -1102, msg: "Mandatory parameter 'symbol' was not sent." } }));
    await expect(venue().fetchQuote(SOL, signal)).rejects.toMatchObject({
      venue: 'binance',
      kind: 'http_error',
    });
  });

  it('reports 429 and 418 as rate limits with Retry-After', async () => {
    answer(() => ({
      status: 429,
      headers: { 'retry-after': '7' },
      body: { code: -1003, msg: 'Too many requests.' },
    }));
    const err = await venue()
      .fetchQuote(SOL, signal)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VenueError);
    expect(err).toMatchObject({ venue: 'binance', kind: 'rate_limited', retryAfterMs: 7000 });
    answer(() => ({
      status: 418,
      headers: { 'retry-after': '120' },
      body: { code: -1003, msg: 'Way too many.' },
    }));
    await expect(venue().fetchQuote(SOL, signal)).rejects.toMatchObject({
      kind: 'rate_limited',
      retryAfterMs: 120_000,
    });
  });

  it('reports the 451 restricted-location answer as a geo-block', async () => {
    answer(() => ({
      status: 451,
      body: {
        code: 0,
        msg: "Service unavailable from a restricted location according to 'b. Eligibility' in https://www.binance.com/en/terms. Please contact customer service if you believe you received this message in error.",
      },
    }));
    await expect(venue().fetchQuote(SOL, signal)).rejects.toMatchObject({ kind: 'geo_blocked' });
  });

  it('rejects malformed tickers as bad_response', async () => {
    const { lastPrice: _omitted, ...noPrice } = TICKER;
    const bodies: unknown[] = [
      noPrice,
      { ...TICKER, lastPrice: 'n/a' },
      { ...TICKER, lastPrice: '0.00000000' },
      { ...TICKER, quoteVolume: undefined },
      { ...TICKER, closeTime: '1499869899040' },
      [TICKER],
      '<html>maintenance</html>',
    ];
    for (const body of bodies) {
      answer(() => ({ body }));
      await expect(venue().fetchQuote(SOL, signal)).rejects.toMatchObject({ kind: 'bad_response' });
    }
  });

  it('times out a slow answer', async () => {
    answer(() => ({ hang: true }));
    await expect(venue(300).fetchQuote(SOL, signal)).rejects.toMatchObject({ kind: 'timeout' });
  });

  it('prices only tokens with a Binance market', async () => {
    answer(() => ({ body: TICKER }));
    const usdt = target('USDT');
    expect(venue().canPrice(SOL)).toBe(true);
    expect(venue().canPrice(usdt)).toBe(false);
    expect(await venue().fetchQuote(usdt, signal)).toBeNull();
    expect(server.requests).toHaveLength(0);
  });
});

describe('binance candles', () => {
  it('pages forward 1000 klines at a time and returns [start, end) oldest first', async () => {
    answer(klinesHandler(MINUTE));
    const start = BASE;
    const end = BASE + 1500 * MINUTE;
    const candles = await venue().fetchCandles(SOL, '1m', new Date(start), new Date(end), signal);
    expect(server.requests).toHaveLength(2);
    const params = server.requests.map((r) => Object.fromEntries(r.url.searchParams));
    expect(server.requests[0]?.url.pathname).toBe('/api/v3/klines');
    expect(params[0]).toEqual({
      symbol: 'SOLUSDT',
      interval: '1m',
      startTime: String(start),
      endTime: String(end - 1),
      limit: '1000',
    });
    expect(params[1]).toEqual({ ...params[0], startTime: String(start + 1000 * MINUTE) });
    expect(candles).toHaveLength(1500);
    expect(candles?.[0]).toEqual({
      openTime: new Date(start),
      open: 100,
      high: 101,
      low: 99,
      close: 100.5,
      volumeUsd: 1000,
      closed: true,
    });
    expect(candles?.[1000]).toMatchObject({
      openTime: new Date(start + 1000 * MINUTE),
      open: 1100,
      volumeUsd: 2000,
    });
    expect(candles?.[1499]?.openTime).toEqual(new Date(end - MINUTE));
    const times = candles?.map((c) => c.openTime.getTime()) ?? [];
    expect(times.every((t, i) => i === 0 || t - (times[i - 1] ?? 0) === MINUTE)).toBe(true);
  });

  it('marks the still-open kline (close time after now) as not closed', async () => {
    answer(klinesHandler(MINUTE));
    const end = NOW + 10 * MINUTE;
    const candles = await venue().fetchCandles(SOL, '1m', new Date(NOW - 3 * MINUTE), new Date(end), signal);
    // Buckets 00:28, 00:29, 00:30 (current, opened at 00:30:00, clock at 00:30:30).
    expect(candles?.map((c) => [c.openTime.toISOString(), c.closed])).toEqual([
      ['2026-03-04T00:28:00.000Z', true],
      ['2026-03-04T00:29:00.000Z', true],
      ['2026-03-04T00:30:00.000Z', false],
    ]);
    expect(server.requests).toHaveLength(1);
  });

  it('drops rows outside [start, end) and duplicate open times', async () => {
    const hour = 3_600_000;
    answer(() => ({
      body: [
        kline(BASE, hour),
        kline(BASE + hour, hour),
        kline(BASE + hour, hour),
        kline(BASE + 3 * hour, hour),
      ],
    }));
    const candles = await venue().fetchCandles(
      SOL,
      '1h',
      new Date(BASE + hour),
      new Date(BASE + 3 * hour),
      signal,
    );
    expect(candles?.map((c) => c.openTime.getTime())).toEqual([BASE + hour]);
    expect(server.requests[0]?.url.searchParams.get('interval')).toBe('1h');
  });

  it('returns null for an invalid symbol and rejects malformed klines', async () => {
    answer(() => ({ status: 400, body: { code: -1121, msg: 'Invalid symbol.' } }));
    expect(
      await venue().fetchCandles(SOL, '1d', new Date(BASE), new Date(BASE + 86_400_000), signal),
    ).toBeNull();
    answer(() => ({
      body: [[BASE, '', '101.0', '99.0', '100.0', '1.0', BASE + MINUTE - 1, '100.0', 1, '0', '0', '0']],
    }));
    await expect(
      venue().fetchCandles(SOL, '1m', new Date(BASE), new Date(BASE + MINUTE), signal),
    ).rejects.toMatchObject({ kind: 'bad_response' });
    answer(() => ({ body: { code: -1121, msg: 'Invalid symbol.' } }));
    await expect(
      venue().fetchCandles(SOL, '1m', new Date(BASE), new Date(BASE + MINUTE), signal),
    ).rejects.toMatchObject({ kind: 'bad_response' });
  });

  it('serves every interval for listed tokens only', () => {
    for (const interval of CANDLE_INTERVALS) {
      expect(venue().canServeCandles(SOL, interval)).toBe(true);
      expect(venue().canServeCandles(target('USDT'), interval)).toBe(false);
    }
  });
});
