import { describe, expect, it } from 'vitest';
import { VenueError } from '../../../src/prices/types.js';
import { createCoinbaseVenue } from '../../../src/prices/venues/coinbase.js';
import type { FakeHandler } from '../../helpers/fake-server.js';
import { signal, target, useVenueServer } from './kit.js';

const SOL = target('SOL');
const HOUR = 3_600_000;
const BASE = Date.parse('2026-03-01T00:00:00Z');
/** The fake clock: 40 days and 20 minutes after BASE. */
const NOW = BASE + 960 * HOUR + 20 * 60_000;

/** Shaped like a live Coinbase answer (strings, nanosecond ISO time). */
const TICKER = {
  ask: '142.51',
  bid: '142.50',
  volume: '1000.5',
  trade_id: 1040406588,
  price: '142.5',
  size: '0.00782662',
  time: '2026-06-19T16:43:33.016274911Z',
  rfq_volume: '31.625279',
};

/** A candle row as Coinbase sends it: numbers, [time s, low, high, open, close, volume base]. */
function row(openMs: number, step: number): number[] {
  const k = (openMs - BASE) / step;
  return [openMs / 1000, 99 + k, 101 + k, 100 + k, 100.5 + k, 2];
}

/**
 * Answers /products/{id}/candles like Coinbase: rejects more than 300 buckets, includes both ends,
 * stops at now, skips buckets listed in `empty` (no trades), newest first.
 */
function candlesHandler(empty: number[] = []): FakeHandler {
  return ({ url }) => {
    const step = Number(url.searchParams.get('granularity')) * 1000;
    const start = Date.parse(url.searchParams.get('start') ?? '');
    const end = Date.parse(url.searchParams.get('end') ?? '');
    if ((end - start) / step > 300) {
      return {
        status: 400,
        body: {
          message:
            'granularity too small for the requested time range. Count of aggregations requested exceeds 300',
        },
      };
    }
    const rows: number[][] = [];
    for (let t = Math.ceil(start / step) * step; t <= end && t <= NOW; t += step) {
      if (!empty.includes(t)) rows.push(row(t, step));
    }
    return { body: rows.reverse() };
  };
}

const server = useVenueServer();
const answer = server.answer;

// Answers from the local fake venue must never hit the timeout, however loaded the machine; the
// timeout itself is exercised with a venue that never answers.
function venue(timeoutMs = 10_000) {
  return createCoinbaseVenue({ baseUrl: server.url, timeoutMs }, { now: () => new Date(NOW) });
}

describe('coinbase quotes', () => {
  it('reads price, converts base volume to USD and parses the ISO time', async () => {
    answer(() => ({ body: TICKER }));
    const quote = await venue().fetchQuote(SOL, signal);
    expect(quote).toEqual({
      price: 142.5,
      volume24hUsd: 142_571.25,
      timestamp: new Date('2026-06-19T16:43:33.016Z'),
    });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.url.pathname).toBe('/products/SOL-USD/ticker');
    expect(server.requests[0]?.url.search).toBe('');
  });

  it('returns null for an unknown product (404 NotFound)', async () => {
    answer(() => ({ status: 404, body: { message: 'NotFound' } }));
    expect(await venue().fetchQuote(SOL, signal)).toBeNull();
  });

  it('reports a 429 as a rate limit with Retry-After', async () => {
    answer(() => ({
      status: 429,
      headers: { 'retry-after': '2' },
      body: { message: 'Public rate limit exceeded' },
    }));
    const err = await venue()
      .fetchQuote(SOL, signal)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VenueError);
    expect(err).toMatchObject({ venue: 'coinbase', kind: 'rate_limited', retryAfterMs: 2000 });
  });

  it('reports other error statuses as HTTP errors', async () => {
    answer(() => ({ status: 503, body: { message: 'service unavailable' } }));
    await expect(venue().fetchQuote(SOL, signal)).rejects.toMatchObject({ kind: 'http_error' });
    answer(() => ({ status: 404, body: '404 page not found' }));
    await expect(venue().fetchQuote(SOL, signal)).rejects.toMatchObject({ kind: 'http_error' });
  });

  it('rejects malformed tickers as bad_response', async () => {
    const { price: _omitted, ...noPrice } = TICKER;
    const bodies: unknown[] = [
      noPrice,
      { ...TICKER, price: '-1' },
      { ...TICKER, price: 'NaN' },
      { ...TICKER, volume: null },
      { ...TICKER, time: 'yesterday' },
      { ...TICKER, time: 1781887140 },
      null,
    ];
    for (const body of bodies) {
      answer(() => ({ body: body === null ? '' : body }));
      await expect(venue().fetchQuote(SOL, signal)).rejects.toMatchObject({ kind: 'bad_response' });
    }
  });

  it('times out a slow answer', async () => {
    answer(() => ({ hang: true }));
    await expect(venue(300).fetchQuote(SOL, signal)).rejects.toMatchObject({ kind: 'timeout' });
  });

  it('prices only tokens with a Coinbase product', async () => {
    answer(() => ({ body: TICKER }));
    expect(venue().canPrice(SOL)).toBe(true);
    expect(venue().canPrice(target('USDC'))).toBe(false);
    expect(venue().canPrice(target('RAY'))).toBe(false);
    expect(await venue().fetchQuote(target('RAY'), signal)).toBeNull();
    expect(server.requests).toHaveLength(0);
  });
});

describe('coinbase candles', () => {
  it('asks in windows of 300 buckets and returns newest-first rows oldest first', async () => {
    answer(candlesHandler());
    const start = BASE;
    const end = BASE + 700 * HOUR;
    const candles = await venue().fetchCandles(SOL, '1h', new Date(start), new Date(end), signal);
    expect(server.requests.map((r) => r.url.pathname)).toEqual([
      '/products/SOL-USD/candles',
      '/products/SOL-USD/candles',
      '/products/SOL-USD/candles',
    ]);
    expect(server.requests.map((r) => Object.fromEntries(r.url.searchParams))).toEqual([
      { granularity: '3600', start: '2026-03-01T00:00:00.000Z', end: '2026-03-13T12:00:00.000Z' },
      { granularity: '3600', start: '2026-03-13T12:00:00.000Z', end: '2026-03-26T00:00:00.000Z' },
      { granularity: '3600', start: '2026-03-26T00:00:00.000Z', end: '2026-03-30T04:00:00.000Z' },
    ]);
    expect(candles).toHaveLength(700);
    expect(candles?.[0]).toEqual({
      openTime: new Date(start),
      open: 100,
      high: 101,
      low: 99,
      close: 100.5,
      volumeUsd: 201,
      closed: true,
    });
    expect(candles?.[699]).toMatchObject({ openTime: new Date(end - HOUR), close: 799.5, volumeUsd: 1599 });
    const times = candles?.map((c) => c.openTime.getTime()) ?? [];
    expect(times.every((t, i) => i === 0 || t - (times[i - 1] ?? 0) === HOUR)).toBe(true);
  });

  it('starts at the first whole bucket, keeps gaps, and marks the current bucket open', async () => {
    const gap = NOW - 20 * 60_000 - 2 * HOUR;
    answer(candlesHandler([gap]));
    const candles = await venue().fetchCandles(
      SOL,
      '1h',
      new Date(NOW - 4 * HOUR),
      new Date(NOW + 5 * HOUR),
      signal,
    );
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.url.searchParams.get('start')).toBe('2026-04-09T21:00:00.000Z');
    expect(candles?.map((c) => [c.openTime.toISOString(), c.closed])).toEqual([
      ['2026-04-09T21:00:00.000Z', true],
      ['2026-04-09T23:00:00.000Z', true],
      ['2026-04-10T00:00:00.000Z', false],
    ]);
  });

  it('does not serve 4h (Coinbase has no such granularity)', async () => {
    answer(candlesHandler());
    const venueUnderTest = venue();
    expect(venueUnderTest.canServeCandles(SOL, '4h')).toBe(false);
    expect(venueUnderTest.canServeCandles(SOL, '1d')).toBe(true);
    expect(venueUnderTest.canServeCandles(target('USDC'), '1d')).toBe(false);
    expect(
      await venueUnderTest.fetchCandles(SOL, '4h', new Date(BASE), new Date(BASE + 4 * HOUR), signal),
    ).toBeNull();
    expect(server.requests).toHaveLength(0);
  });

  it('returns null for an unknown product and classifies error objects', async () => {
    const range = [new Date(BASE), new Date(BASE + HOUR)] as const;
    answer(() => ({ status: 404, body: { message: 'NotFound' } }));
    expect(await venue().fetchCandles(SOL, '1h', ...range, signal)).toBeNull();
    answer(() => ({ status: 400, body: { message: 'Unsupported granularity' } }));
    await expect(venue().fetchCandles(SOL, '1h', ...range, signal)).rejects.toMatchObject({
      kind: 'http_error',
    });
    answer(() => ({ body: { message: 'NotFound' } }));
    await expect(venue().fetchCandles(SOL, '1h', ...range, signal)).rejects.toMatchObject({
      kind: 'bad_response',
    });
    answer(() => ({ body: [[String(BASE / 1000), 99, 101, 100, 100.5, 2]] }));
    await expect(venue().fetchCandles(SOL, '1h', ...range, signal)).rejects.toMatchObject({
      kind: 'bad_response',
    });
  });
});
