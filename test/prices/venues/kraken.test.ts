import { describe, expect, it } from 'vitest';
import { CANDLE_INTERVALS, VenueError } from '../../../src/prices/types.js';
import { createKrakenVenue } from '../../../src/prices/venues/kraken.js';
import type { FakeHandler } from '../../helpers/fake-server.js';
import { signal, target, useVenueServer } from './kit.js';

const SOL = target('SOL');
const BTC = target('BTC');
const MINUTE = 60_000;
const HOUR = 3_600_000;
const BASE = Date.parse('2026-03-01T00:00:00Z');
/** Where the fake Kraken's clock stands: 2026-03-11T00:00:30Z. */
const NOW = BASE + 240 * HOUR + 30_000;
/** Kraken answers under its own pair names. */
const RESULT_KEY: Record<string, string> = { SOLUSD: 'SOLUSD', XBTUSD: 'XXBTZUSD' };

function tickerEntry(last: string, volume24h: string, vwap24h: string) {
  return {
    a: ['142.51000', '1', '1.000'],
    b: ['142.49000', '3', '3.000'],
    c: [last, '0.50000000'],
    v: ['1000.00000000', volume24h],
    p: ['140.00000', vwap24h],
    t: [100, 200],
    l: ['138.00000', '137.50000'],
    h: ['145.00000', '146.00000'],
    o: '139.00000',
  };
}

/** An OHLC row as Kraken sends it; prices encode the bucket's index so order is checkable. */
function ohlcRow(openMs: number, step: number): unknown[] {
  const k = (openMs - BASE) / step;
  return [
    openMs / 1000,
    (100 + k).toFixed(1),
    (101 + k).toFixed(1),
    (99 + k).toFixed(1),
    (100.5 + k).toFixed(1),
    (100.25 + k).toFixed(2),
    '4.00000000',
    12,
  ];
}

/**
 * Answers /0/public/OHLC like Kraken: rows after `since`, never more than the 720 most recent,
 * the last one being the current (uncommitted) bucket; `last` is the newest committed bucket.
 */
const ohlcHandler: FakeHandler = ({ url }) => {
  const pair = url.searchParams.get('pair') ?? '';
  const step = Number(url.searchParams.get('interval')) * MINUTE;
  const since = Number(url.searchParams.get('since')) * 1000;
  const current = Math.floor(NOW / step) * step;
  const rows: unknown[] = [];
  for (
    let t = Math.max(current - 719 * step, Math.floor(since / step) * step + step);
    t <= current;
    t += step
  ) {
    rows.push(ohlcRow(t, step));
  }
  return { body: { error: [], result: { [RESULT_KEY[pair] ?? pair]: rows, last: (current - step) / 1000 } } };
};

const server = useVenueServer();
const answer = server.answer;

// Answers from the local fake venue must never hit the timeout, however loaded the machine; the
// timeout itself is exercised with a venue that never answers.
function venue(timeoutMs = 10_000) {
  return createKrakenVenue({ baseUrl: server.url, timeoutMs });
}

describe('kraken quotes', () => {
  it('reads c[0] as the price and v[1] × p[1] as USD volume, with no timestamp', async () => {
    answer(() => ({
      body: { error: [], result: { SOLUSD: tickerEntry('142.50000', '2000.50000000', '141.25000') } },
    }));
    const quote = await venue().fetchQuote(SOL, signal);
    expect(quote).toEqual({ price: 142.5, volume24hUsd: 282_570.625, timestamp: null });
    expect(server.requests[0]?.url.pathname).toBe('/0/public/Ticker');
    expect(server.requests[0]?.url.search).toBe('?pair=SOLUSD');
  });

  it("takes the single result key, which is Kraken's own name (XBTUSD → XXBTZUSD)", async () => {
    // Kraken's doc example for the Ticker endpoint.
    answer(() => ({
      body: {
        error: [],
        result: {
          XXBTZUSD: {
            a: ['30300.10000', '1', '1.000'],
            b: ['30300.00000', '1', '1.000'],
            c: ['30303.20000', '0.00067643'],
            v: ['4083.67001100', '4412.73601799'],
            p: ['30706.77771', '30689.13205'],
            t: [34619, 38907],
            l: ['29868.30000', '29868.30000'],
            h: ['31631.00000', '31631.00000'],
            o: '30502.80000',
          },
        },
      },
    }));
    const quote = await venue().fetchQuote(BTC, signal);
    expect(server.requests[0]?.url.search).toBe('?pair=XBTUSD');
    expect(quote?.price).toBe(30303.2);
    expect(quote?.volume24hUsd).toBeCloseTo(135_423_038.357886, 5);
  });

  it('returns null for an unknown pair (HTTP 200 with an error)', async () => {
    answer(() => ({ body: { error: ['EQuery:Unknown asset pair'] } }));
    expect(await venue().fetchQuote(SOL, signal)).toBeNull();
  });

  it('reports rate limits, inside a 200 or as a 429', async () => {
    for (const error of ['EAPI:Rate limit exceeded', 'EGeneral:Too many requests']) {
      answer(() => ({ body: { error: [error] } }));
      const err = await venue()
        .fetchQuote(SOL, signal)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(VenueError);
      expect(err).toMatchObject({ venue: 'kraken', kind: 'rate_limited' });
    }
    answer(() => ({ status: 429, headers: { 'retry-after': '5' }, body: '' }));
    await expect(venue().fetchQuote(SOL, signal)).rejects.toMatchObject({
      kind: 'rate_limited',
      retryAfterMs: 5000,
    });
  });

  it('reports other errors inside a 200 as upstream errors', async () => {
    answer(() => ({ body: { error: ['EService:Unavailable'] } }));
    await expect(venue().fetchQuote(SOL, signal)).rejects.toMatchObject({
      kind: 'upstream_error',
      message: 'kraken: EService:Unavailable',
    });
  });

  it('rejects malformed tickers as bad_response', async () => {
    const entry = tickerEntry('142.50000', '2000.50000000', '141.25000');
    const bodies: unknown[] = [
      { error: [], result: { SOLUSD: { ...entry, c: undefined } } },
      { error: [], result: { SOLUSD: { ...entry, c: ['abc', '1'] } } },
      { error: [], result: { SOLUSD: { ...entry, c: ['0.00000', '1'] } } },
      { error: [], result: { SOLUSD: { ...entry, v: ['1000.0'] } } },
      { error: [], result: { SOLUSD: entry, SOLUSDT: entry } },
      { error: [], result: {} },
      { error: [] },
      { result: { SOLUSD: entry } },
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

  it('prices only tokens with a Kraken pair', async () => {
    answer(() => ({ body: { error: ['EQuery:Unknown asset pair'] } }));
    expect(venue().canPrice(SOL)).toBe(true);
    expect(venue().canPrice(target('ORCA'))).toBe(false);
    expect(await venue().fetchQuote(target('ORCA'), signal)).toBeNull();
    expect(server.requests).toHaveLength(0);
  });
});

describe('kraken candles', () => {
  it('asks once with since just before start and keeps [start, end) oldest first', async () => {
    answer(ohlcHandler);
    const start = BASE + 200 * HOUR;
    const end = start + 10 * HOUR;
    const candles = await venue().fetchCandles(SOL, '1h', new Date(start), new Date(end), signal);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.url.pathname).toBe('/0/public/OHLC');
    expect(Object.fromEntries(server.requests[0]?.url.searchParams ?? [])).toEqual({
      pair: 'SOLUSD',
      interval: '60',
      since: String(start / 1000 - 1),
    });
    expect(candles).toHaveLength(10);
    expect(candles?.[0]).toEqual({
      openTime: new Date(start),
      open: 300,
      high: 301,
      low: 299,
      close: 300.5,
      volumeUsd: 1201,
      closed: true,
    });
    expect(candles?.[9]?.openTime).toEqual(new Date(end - HOUR));
  });

  it('marks the last (uncommitted) row as not closed and reads the XXBTZUSD key', async () => {
    answer(ohlcHandler);
    const candles = await venue().fetchCandles(
      BTC,
      '4h',
      new Date(NOW - 9 * HOUR),
      new Date(NOW + HOUR),
      signal,
    );
    expect(server.requests[0]?.url.searchParams.get('interval')).toBe('240');
    expect(server.requests[0]?.url.searchParams.get('pair')).toBe('XBTUSD');
    expect(candles?.map((c) => [c.openTime.toISOString(), c.closed])).toEqual([
      ['2026-03-10T16:00:00.000Z', true],
      ['2026-03-10T20:00:00.000Z', true],
      ['2026-03-11T00:00:00.000Z', false],
    ]);
  });

  it('returns only the 720 most recent buckets Kraken keeps, from one request', async () => {
    answer(ohlcHandler);
    const candles = await venue().fetchCandles(
      SOL,
      '1m',
      new Date(NOW - 1000 * MINUTE),
      new Date(NOW - 600 * MINUTE),
      signal,
    );
    expect(server.requests).toHaveLength(1);
    const current = NOW - 30_000;
    expect(candles).toHaveLength(120);
    expect(candles?.[0]?.openTime).toEqual(new Date(current - 719 * MINUTE));
    expect(candles?.[119]?.openTime).toEqual(new Date(current - 600 * MINUTE));
  });

  it('returns null for an unknown pair and classifies errors', async () => {
    const range = [new Date(BASE), new Date(BASE + HOUR)] as const;
    answer(() => ({ body: { error: ['EQuery:Unknown asset pair'] } }));
    expect(await venue().fetchCandles(SOL, '1h', ...range, signal)).toBeNull();
    answer(() => ({ body: { error: ['EGeneral:Invalid arguments'] } }));
    await expect(venue().fetchCandles(SOL, '1h', ...range, signal)).rejects.toMatchObject({
      kind: 'upstream_error',
    });
    answer(() => ({
      body: { error: [], result: { SOLUSD: [[BASE / 1000, 'x', '1', '1', '1', '1', '1', 1]], last: 0 } },
    }));
    await expect(venue().fetchCandles(SOL, '1h', ...range, signal)).rejects.toMatchObject({
      kind: 'bad_response',
    });
  });

  it('serves every interval for listed tokens only', () => {
    for (const interval of CANDLE_INTERVALS) {
      expect(venue().canServeCandles(SOL, interval)).toBe(true);
      expect(venue().canServeCandles(target('ORCA'), interval)).toBe(false);
    }
  });
});
