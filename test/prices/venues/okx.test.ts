import { describe, expect, it } from 'vitest';
import { CANDLE_INTERVALS, VenueError } from '../../../src/prices/types.js';
import { createOkxVenue } from '../../../src/prices/venues/okx.js';
import type { FakeHandler } from '../../helpers/fake-server.js';
import { signal, target, useVenueServer } from './kit.js';

const SOL = target('SOL');
const MINUTE = 60_000;
const HOUR = 3_600_000;
const BASE = Date.parse('2026-03-01T00:00:00Z');
/** Where the fake OKX's clock stands: 2026-03-03T00:00:30Z. */
const NOW = BASE + 48 * HOUR + 30_000;
const BAR_MS: Record<string, number> = { '1m': MINUTE, '1H': HOUR, '4H': 4 * HOUR, '1Dutc': 24 * HOUR };

/** OKX's documented ticker sample: every field a string, `ts` included. */
const TICKER = {
  instType: 'SPOT',
  instId: 'SOL-USDT',
  last: '101.7',
  lastSz: '1.2',
  askPx: '101.7',
  askSz: '10',
  bidPx: '101.69',
  bidSz: '8',
  open24h: '100.1',
  high24h: '103.4',
  low24h: '98.9',
  volCcy24h: '118811234.5',
  vol24h: '1168265.52505',
  sodUtc0: '100.5',
  sodUtc8: '100.9',
  ts: '1789199306073',
};

const NOT_FOUND = {
  code: '51001',
  msg: "Instrument ID, Instrument ID code, or Spread ID doesn't exist.",
  data: [],
};

/** The bucket's index from BASE, offset so that buckets before BASE still have positive prices. */
function bucketIndex(openMs: number, step: number): number {
  return 5000 + (openMs - BASE) / step;
}

/** A candle row as OKX sends it (all strings); prices encode the bucket's index. */
function candleRow(openMs: number, step: number, confirm: '0' | '1'): string[] {
  const k = bucketIndex(openMs, step);
  const volCcy = (1000 + k).toFixed(2);
  return [
    String(openMs),
    String(100 + k),
    String(101 + k),
    String(99 + k),
    String(100.5 + k),
    '10',
    volCcy,
    volCcy,
    confirm,
  ];
}

/**
 * Answers /api/v5/market/candles like OKX: buckets earlier than `after`, newest first, at most
 * `limit`, never older than the latest 1,440; the current bucket has confirm "0".
 */
const candlesHandler: FakeHandler = ({ url }) => {
  const step = BAR_MS[url.searchParams.get('bar') ?? ''];
  if (step === undefined)
    return { status: 400, body: { code: '51000', msg: 'Parameter bar error', data: [] } };
  const after = Number(url.searchParams.get('after'));
  const limit = Number(url.searchParams.get('limit'));
  const current = Math.floor(NOW / step) * step;
  const rows: string[][] = [];
  for (
    let t = Math.min(current, Math.ceil(after / step) * step - step);
    t > current - 1440 * step;
    t -= step
  ) {
    if (rows.length === limit) break;
    rows.push(candleRow(t, step, t === current ? '0' : '1'));
  }
  return { body: { code: '0', msg: '', data: rows } };
};

const server = useVenueServer();
const answer = server.answer;

// Answers from the local fake venue must never hit the timeout, however loaded the machine; the
// timeout itself is exercised with a venue that never answers.
function venue(timeoutMs = 10_000) {
  return createOkxVenue({ baseUrl: server.url, timeoutMs });
}

describe('okx quotes', () => {
  it('reads last, volCcy24h as USD volume and the string ts', async () => {
    answer(() => ({ body: { code: '0', msg: '', data: [TICKER] } }));
    const quote = await venue().fetchQuote(SOL, signal);
    expect(quote).toEqual({ price: 101.7, volume24hUsd: 118_811_234.5, timestamp: new Date(1789199306073) });
    expect(server.requests[0]?.url.pathname).toBe('/api/v5/market/ticker');
    expect(server.requests[0]?.url.search).toBe('?instId=SOL-USDT');
  });

  it('returns null for code 51001, with HTTP 200 or 400', async () => {
    for (const status of [200, 400]) {
      answer(() => ({ status, body: NOT_FOUND }));
      expect(await venue().fetchQuote(SOL, signal)).toBeNull();
    }
  });

  it('reports code 50011 and HTTP 429 as rate limits', async () => {
    answer(() => ({ body: { code: '50011', msg: 'Too Many Requests', data: [] } }));
    const err = await venue()
      .fetchQuote(SOL, signal)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VenueError);
    expect(err).toMatchObject({ venue: 'okx', kind: 'rate_limited' });
    answer(() => ({
      status: 429,
      headers: { 'retry-after': '1' },
      body: { msg: 'Too Many Requests', code: '50011' },
    }));
    await expect(venue().fetchQuote(SOL, signal)).rejects.toMatchObject({
      kind: 'rate_limited',
      retryAfterMs: 1000,
    });
  });

  it('reports other codes as upstream errors and a bare 400 as an HTTP error', async () => {
    answer(() => ({ status: 400, body: { code: '50014', data: [], msg: 'instType cannot be empty' } }));
    await expect(venue().fetchQuote(SOL, signal)).rejects.toMatchObject({
      kind: 'upstream_error',
      message: 'okx: code 50014: instType cannot be empty',
    });
    answer(() => ({ body: { code: '50001', msg: 'Service temporarily unavailable', data: [] } }));
    await expect(venue().fetchQuote(SOL, signal)).rejects.toMatchObject({ kind: 'upstream_error' });
    answer(() => ({ status: 400, body: 'Bad Request' }));
    await expect(venue().fetchQuote(SOL, signal)).rejects.toMatchObject({ kind: 'http_error' });
  });

  it('rejects malformed tickers as bad_response', async () => {
    const { ts: _omitted, ...noTs } = TICKER;
    const bodies: unknown[] = [
      { code: '0', msg: '', data: [] },
      { code: '0', msg: '', data: [{ ...TICKER, last: '' }] },
      { code: '0', msg: '', data: [{ ...TICKER, last: '-101.7' }] },
      { code: '0', msg: '', data: [{ ...TICKER, volCcy24h: 'lots' }] },
      { code: '0', msg: '', data: [noTs] },
      { code: '0', msg: '', data: TICKER },
      { code: 0, msg: '', data: [TICKER] },
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

  it('prices only tokens with an OKX instrument', async () => {
    answer(() => ({ body: { code: '0', msg: '', data: [TICKER] } }));
    expect(venue().canPrice(SOL)).toBe(true);
    expect(venue().canPrice(target('USDT'))).toBe(false);
    expect(await venue().fetchQuote(target('USDT'), signal)).toBeNull();
    expect(server.requests).toHaveLength(0);
  });
});

describe('okx candles', () => {
  it('pages backwards 300 at a time until start is passed, returning oldest first', async () => {
    answer(candlesHandler);
    const end = BASE + 40 * HOUR;
    const start = end - 700 * MINUTE;
    const candles = await venue().fetchCandles(SOL, '1m', new Date(start), new Date(end), signal);
    expect(server.requests.map((r) => r.url.pathname)).toEqual([
      '/api/v5/market/candles',
      '/api/v5/market/candles',
      '/api/v5/market/candles',
    ]);
    const first = { instId: 'SOL-USDT', bar: '1m', limit: '300' };
    expect(server.requests.map((r) => Object.fromEntries(r.url.searchParams))).toEqual([
      { ...first, after: String(end) },
      { ...first, after: String(end - 300 * MINUTE) },
      { ...first, after: String(end - 600 * MINUTE) },
    ]);
    expect(candles).toHaveLength(700);
    const k = bucketIndex(start, MINUTE);
    expect(candles?.[0]).toEqual({
      openTime: new Date(start),
      open: 100 + k,
      high: 101 + k,
      low: 99 + k,
      close: 100.5 + k,
      volumeUsd: 1000 + k,
      closed: true,
    });
    expect(candles?.[699]?.openTime).toEqual(new Date(end - MINUTE));
    const times = candles?.map((c) => c.openTime.getTime()) ?? [];
    expect(times.every((t, i) => i === 0 || t - (times[i - 1] ?? 0) === MINUTE)).toBe(true);
  });

  it('keeps whole buckets in [start, end) and marks the unconfirmed one open', async () => {
    answer(candlesHandler);
    const candles = await venue().fetchCandles(
      SOL,
      '4h',
      new Date(NOW - 9 * HOUR),
      new Date(NOW + HOUR),
      signal,
    );
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.url.searchParams.get('bar')).toBe('4H');
    expect(candles?.map((c) => [c.openTime.toISOString(), c.closed])).toEqual([
      ['2026-03-02T16:00:00.000Z', true],
      ['2026-03-02T20:00:00.000Z', true],
      ['2026-03-03T00:00:00.000Z', false],
    ]);
  });

  it('stops at a short page when OKX has nothing older (it keeps the latest 1,440 buckets)', async () => {
    answer(candlesHandler);
    const candles = await venue().fetchCandles(
      SOL,
      '1m',
      new Date(NOW - 30 * HOUR),
      new Date(NOW - 20 * HOUR),
      signal,
    );
    expect(server.requests).toHaveLength(1);
    const current = NOW - 30_000;
    expect(candles).toHaveLength(240);
    expect(candles?.[0]?.openTime).toEqual(new Date(current - 1439 * MINUTE));
    expect(candles?.[239]?.openTime).toEqual(new Date(current - 1200 * MINUTE));
  });

  it('stops once a page reaches back past start, asking for UTC-aligned days', async () => {
    answer(candlesHandler);
    const candles = await venue().fetchCandles(
      SOL,
      '1d',
      new Date(BASE - 10 * 24 * HOUR),
      new Date(BASE),
      signal,
    );
    expect(server.requests.map((r) => r.url.searchParams.get('bar'))).toEqual(['1Dutc']);
    expect(candles?.map((c) => c.openTime.getTime())).toEqual([
      BASE - 10 * 24 * HOUR,
      BASE - 9 * 24 * HOUR,
      BASE - 8 * 24 * HOUR,
      BASE - 7 * 24 * HOUR,
      BASE - 6 * 24 * HOUR,
      BASE - 5 * 24 * HOUR,
      BASE - 4 * 24 * HOUR,
      BASE - 3 * 24 * HOUR,
      BASE - 2 * 24 * HOUR,
      BASE - 1 * 24 * HOUR,
    ]);
  });

  it('returns null for an unknown instrument and classifies errors', async () => {
    const range = [new Date(BASE), new Date(BASE + HOUR)] as const;
    answer(() => ({ body: NOT_FOUND }));
    expect(await venue().fetchCandles(SOL, '1h', ...range, signal)).toBeNull();
    answer(() => ({ body: { code: '50011', msg: 'Too Many Requests', data: [] } }));
    await expect(venue().fetchCandles(SOL, '1h', ...range, signal)).rejects.toMatchObject({
      kind: 'rate_limited',
    });
    answer(() => ({
      body: { code: '0', msg: '', data: [[String(BASE), '1', '1', '1', '1', '1', '1', '1', 1]] },
    }));
    await expect(venue().fetchCandles(SOL, '1h', ...range, signal)).rejects.toMatchObject({
      kind: 'bad_response',
    });
  });

  it('serves every interval for listed tokens only', () => {
    for (const interval of CANDLE_INTERVALS) {
      expect(venue().canServeCandles(SOL, interval)).toBe(true);
      expect(venue().canServeCandles(target('USDT'), interval)).toBe(false);
    }
  });
});
