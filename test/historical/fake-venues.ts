import type { FakeRequest, FakeResponse } from '../helpers/fake-server.js';

/**
 * Candle endpoints of Binance, OKX and Coinbase on one local server, answering in each venue's own
 * shape of the venues' public APIs: Binance klines oldest first with string prices and the
 * quote volume; OKX newest first, all strings, the current bucket unconfirmed; Coinbase newest
 * first, numbers, base volume, at most 300 buckets per request. Every venue serves history up to
 * the bucket holding `now`, which is still open. Prices and volumes are functions of (venue,
 * bucket), so tests can compute the expected series by hand.
 */
export type FakeVenue = 'binance' | 'okx' | 'coinbase';

const STEP_BY_NAME: Record<string, number> = {
  '1m': 60_000,
  '5m': 300_000,
  '15m': 900_000,
  '1h': 3_600_000,
  '4h': 14_400_000,
  '1H': 3_600_000,
  '4H': 14_400_000,
  '1Dutc': 86_400_000,
  '1d': 86_400_000,
};

const OFFSET: Record<FakeVenue, number> = { binance: 0, coinbase: 0.3, okx: 0.6 };

export function fakeClose(venue: FakeVenue, openMs: number, stepMs: number): number {
  const k = Math.floor(openMs / stepMs);
  return 100 + (k % 40) * 0.25 + OFFSET[venue];
}

/** The USD volume the adapter will read for the bucket (Coinbase: base volume × close). */
export function fakeVolumeUsd(venue: FakeVenue, openMs: number, stepMs: number): number {
  const k = Math.floor(openMs / stepMs);
  if (venue === 'binance') return 1000 + (k % 7) * 100;
  if (venue === 'okx') return 2000 + (k % 5) * 50;
  return coinbaseBaseVolume(k) * fakeClose('coinbase', openMs, stepMs);
}

function coinbaseBaseVolume(k: number): number {
  return 10 + (k % 3);
}

/** What the service should answer for a bucket the given venues cover (same rounding). */
export function expectedPrice(venues: FakeVenue[], openMs: number, stepMs: number): number {
  let weighted = 0;
  let volume = 0;
  for (const v of venues) {
    weighted += fakeClose(v, openMs, stepMs) * fakeVolumeUsd(v, openMs, stepMs);
    volume += fakeVolumeUsd(v, openMs, stepMs);
  }
  return Number((weighted / volume).toPrecision(12));
}

export interface FakeVenueState {
  now: () => number;
  /** `${venue}:${openMs}` of buckets a venue has no candle for. */
  missing: Set<string>;
  /** Replaces a venue's answer while set. */
  override: Partial<Record<FakeVenue, (request: FakeRequest) => FakeResponse>>;
}

export function venueOf(path: string): FakeVenue | null {
  if (path.startsWith('/api/v3/klines')) return 'binance';
  if (path.startsWith('/api/v5/market/candles')) return 'okx';
  if (path.startsWith('/products/')) return 'coinbase';
  return null;
}

function binance(url: URL, state: FakeVenueState): FakeResponse {
  const step = STEP_BY_NAME[url.searchParams.get('interval') ?? ''];
  if (step === undefined) return { status: 400, body: { code: -1120, msg: 'Invalid interval.' } };
  const startTime = Number(url.searchParams.get('startTime'));
  const endTime = Number(url.searchParams.get('endTime'));
  const limit = Number(url.searchParams.get('limit') ?? 500);
  const current = Math.floor(state.now() / step) * step;
  const rows: unknown[] = [];
  for (let t = Math.ceil(startTime / step) * step; t <= Math.min(endTime, current); t += step) {
    if (rows.length === limit) break;
    if (state.missing.has(`binance:${t}`)) continue;
    const close = fakeClose('binance', t, step);
    const quote = fakeVolumeUsd('binance', t, step);
    rows.push([
      t,
      String(close - 0.1),
      String(close + 0.5),
      String(close - 0.5),
      String(close),
      String(quote / close),
      t + step - 1,
      String(quote),
      42,
      '0',
      '0',
      '0',
    ]);
  }
  return { body: rows };
}

function okx(url: URL, state: FakeVenueState): FakeResponse {
  const step = STEP_BY_NAME[url.searchParams.get('bar') ?? ''];
  if (step === undefined)
    return { status: 400, body: { code: '51000', msg: 'Parameter bar error', data: [] } };
  const after = Number(url.searchParams.get('after'));
  const limit = Number(url.searchParams.get('limit') ?? 100);
  const current = Math.floor(state.now() / step) * step;
  const rows: string[][] = [];
  for (let t = Math.min(current, Math.ceil(after / step) * step - step); rows.length < limit; t -= step) {
    if (state.missing.has(`okx:${t}`)) continue;
    const close = fakeClose('okx', t, step);
    const volCcy = String(fakeVolumeUsd('okx', t, step));
    rows.push([
      String(t),
      String(close - 0.1),
      String(close + 0.5),
      String(close - 0.5),
      String(close),
      '12.5',
      volCcy,
      volCcy,
      t === current ? '0' : '1',
    ]);
  }
  return { body: { code: '0', msg: '', data: rows } };
}

function coinbase(url: URL, state: FakeVenueState): FakeResponse {
  const granularity = Number(url.searchParams.get('granularity'));
  const step = granularity * 1000;
  if (![60, 300, 900, 3600, 21600, 86400].includes(granularity)) {
    return { status: 400, body: { message: 'Unsupported granularity' } };
  }
  const start = Date.parse(url.searchParams.get('start') ?? '');
  const end = Date.parse(url.searchParams.get('end') ?? '');
  if ((end - start) / step > 300) {
    return { status: 400, body: { message: 'granularity too small for the requested time range' } };
  }
  const current = Math.floor(state.now() / step) * step;
  const rows: number[][] = [];
  for (let t = Math.floor(Math.min(end, current) / step) * step; t >= start; t -= step) {
    if (state.missing.has(`coinbase:${t}`)) continue;
    const close = fakeClose('coinbase', t, step);
    rows.push([
      t / 1000,
      close - 0.5,
      close + 0.5,
      close - 0.1,
      close,
      coinbaseBaseVolume(Math.floor(t / step)),
    ]);
  }
  return { body: rows };
}

export function answerCandles(request: FakeRequest, state: FakeVenueState): FakeResponse {
  const venue = venueOf(request.url.pathname);
  if (venue === null) return { status: 404, body: { message: 'NotFound' } };
  const override = state.override[venue];
  if (override) return override(request);
  if (venue === 'binance') return binance(request.url, state);
  if (venue === 'okx') return okx(request.url, state);
  return coinbase(request.url, state);
}
