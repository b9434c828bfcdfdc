import { type Clock, systemClock } from '../../lib/clock.js';
import type { PriceTarget } from '../tokens.js';
import {
  type Candle,
  type CandleInterval,
  type CandleVenue,
  INTERVAL_MS,
  type PriceVenue,
  VenueError,
  type VenueQuote,
  type VenueSettings,
} from '../types.js';
import { fieldReaders, isRecord, toNumber, venueGet } from './http.js';

/**
 * CoinGecko's chart endpoint returns points, not candles, at a granularity it picks from the range:
 * hourly for any window up to 90 days (5-minutely within a day of now), daily beyond. Paging in
 * 90-day windows therefore always yields at least hourly points, enough for these intervals and
 * too coarse for anything finer.
 */
const SERVED_INTERVALS: ReadonlySet<CandleInterval> = new Set<CandleInterval>(['1h', '4h', '1d']);
const WINDOW_MS = 90 * 86_400_000;

/** Statuses whose bodies CoinGecko fills with a reason worth reading ("coin not found", key errors). */
const READ_STATUSES = [400, 401, 403, 404];

type Point = [time: number, price: number];

const { badResponse } = fieldReaders('coingecko');

/**
 * CoinGecko's error bodies come in three shapes: `{"error":"coin not found"}`,
 * `{"status":{"error_code","error_message"}}` and `{"error":{"status":{...}}}`.
 */
function readError(body: unknown): { code: number | null; message: string } | null {
  if (!isRecord(body)) return null;
  if (typeof body.error === 'string') return { code: null, message: body.error };
  const status = isRecord(body.error) ? body.error.status : body.status;
  if (!isRecord(status)) return null;
  const code = typeof status.error_code === 'number' ? status.error_code : null;
  const message = typeof status.error_message === 'string' ? status.error_message : 'no message';
  return { code, message };
}

/** A field CoinGecko may omit or null: null then, a VenueError when present but not a number. */
function optionalNumber(value: unknown, field: string): number | null {
  if (value === undefined || value === null) return null;
  const n = toNumber(value);
  if (n === null || n < 0) throw badResponse(`${field} is not a non-negative number`);
  return n;
}

function parseEntry(entry: unknown): VenueQuote | null {
  if (!isRecord(entry)) throw badResponse('price entry is not an object');
  // A coin without a USD price comes back as an empty entry: nothing to quote.
  if (entry.usd === undefined || entry.usd === null) return null;
  const price = toNumber(entry.usd);
  if (price === null || price <= 0) throw badResponse('usd is not a positive number');
  const updatedAt = optionalNumber(entry.last_updated_at, 'last_updated_at');
  return {
    price,
    volume24hUsd: optionalNumber(entry.usd_24h_vol, 'usd_24h_vol'),
    timestamp: updatedAt === null ? null : new Date(updatedAt * 1000),
  };
}

/** Solana addresses are case-sensitive, but CoinGecko lowercases EVM keys; prefer the exact key. */
function findByAddress(body: Record<string, unknown>, mint: string): unknown {
  if (Object.hasOwn(body, mint)) return body[mint];
  const lower = mint.toLowerCase();
  const key = Object.keys(body).find((k) => k.toLowerCase() === lower);
  return key === undefined ? undefined : body[key];
}

function parsePoints(body: unknown): Point[] {
  if (!isRecord(body) || !Array.isArray(body.prices)) throw badResponse('chart has no prices array');
  return body.prices.map((point): Point => {
    if (!Array.isArray(point) || typeof point[0] !== 'number' || typeof point[1] !== 'number') {
      throw badResponse('chart point is not [ms, price]');
    }
    if (!Number.isFinite(point[0]) || !Number.isFinite(point[1]))
      throw badResponse('chart point is not finite');
    return [point[0], point[1]];
  });
}

/** Groups points into UTC-aligned buckets starting in [firstOpen, end); points must be oldest first. */
function toCandles(points: Point[], step: number, firstOpen: number, end: number, now: number): Candle[] {
  const candles: Candle[] = [];
  let current: Candle | undefined;
  for (const [time, price] of points) {
    const openTime = Math.floor(time / step) * step;
    if (openTime < firstOpen || openTime >= end) continue;
    if (current && current.openTime.getTime() === openTime) {
      current.high = Math.max(current.high, price);
      current.low = Math.min(current.low, price);
      current.close = price;
      continue;
    }
    current = {
      openTime: new Date(openTime),
      open: price,
      high: price,
      low: price,
      close: price,
      // total_volumes is a rolling 24h figure at each point, not the volume traded in the bucket.
      volumeUsd: null,
      closed: openTime + step <= now,
    };
    candles.push(current);
  }
  return candles;
}

export function createCoinGeckoVenue(
  settings: VenueSettings & { plan?: 'demo' | 'pro' },
  clock: Clock = systemClock,
): PriceVenue & CandleVenue {
  const baseUrl = settings.baseUrl.replace(/\/+$/, '');
  const headers: Record<string, string> = {};
  if (settings.apiKey) {
    headers[settings.plan === 'pro' ? 'x-cg-pro-api-key' : 'x-cg-demo-api-key'] = settings.apiKey;
  }

  /** The parsed body, or null when CoinGecko says the coin does not exist. */
  async function getJson(path: string, signal: AbortSignal): Promise<{ body: unknown } | null> {
    const response = await venueGet(`${baseUrl}${path}`, {
      venue: 'coingecko',
      timeoutMs: settings.timeoutMs,
      signal,
      headers,
      acceptStatuses: READ_STATUSES,
      clock,
    });
    if (response.status >= 200 && response.status < 300) return { body: response.body };
    const error = readError(response.body);
    if ((response.status === 404 || response.status === 400) && error && /not found/i.test(error.message)) {
      return null;
    }
    // Some rate-limit answers arrive as 401 with the vendor code 429 in the body.
    if (error?.code === 429) {
      throw new VenueError('coingecko', 'rate_limited', `HTTP ${response.status}: ${error.message}`);
    }
    const detail = error ? `: ${error.code === null ? '' : `${error.code} `}${error.message}` : '';
    throw new VenueError('coingecko', 'http_error', `HTTP ${response.status}${detail}`);
  }

  async function fetchChart(
    id: string,
    from: number,
    to: number,
    signal: AbortSignal,
  ): Promise<Point[] | null> {
    const query = `vs_currency=usd&from=${Math.floor(from / 1000)}&to=${Math.ceil(to / 1000)}`;
    const result = await getJson(`/coins/${encodeURIComponent(id)}/market_chart/range?${query}`, signal);
    return result === null ? null : parsePoints(result.body);
  }

  return {
    name: 'coingecko',
    role: 'market',

    canPrice(target: PriceTarget): boolean {
      return Boolean(target.token?.markets.coingecko) || target.mint !== null;
    },

    async fetchQuote(target: PriceTarget, signal: AbortSignal): Promise<VenueQuote | null> {
      const extras = 'vs_currencies=usd&include_24hr_vol=true&include_last_updated_at=true';
      const id = target.token?.markets.coingecko;
      if (id) {
        const result = await getJson(`/simple/price?ids=${encodeURIComponent(id)}&${extras}`, signal);
        if (result === null) return null;
        if (!isRecord(result.body)) throw badResponse('simple/price body is not an object');
        // Unknown ids are silently left out of the answer.
        return Object.hasOwn(result.body, id) ? parseEntry(result.body[id]) : null;
      }
      const mint = target.mint;
      if (mint === null) return null;
      const path = `/simple/token_price/solana?contract_addresses=${encodeURIComponent(mint)}&${extras}`;
      const result = await getJson(path, signal);
      if (result === null) return null;
      if (!isRecord(result.body)) throw badResponse('token_price body is not an object');
      const entry = findByAddress(result.body, mint);
      return entry === undefined ? null : parseEntry(entry);
    },

    canServeCandles(target: PriceTarget, interval: CandleInterval): boolean {
      return Boolean(target.token?.markets.coingecko) && SERVED_INTERVALS.has(interval);
    },

    async fetchCandles(
      target: PriceTarget,
      interval: CandleInterval,
      start: Date,
      end: Date,
      signal: AbortSignal,
    ): Promise<Candle[] | null> {
      const id = target.token?.markets.coingecko;
      if (!id || !SERVED_INTERVALS.has(interval)) return null;
      const step = INTERVAL_MS[interval];
      const nowMs = clock.now().getTime();
      const firstOpen = Math.ceil(start.getTime() / step) * step;
      // Fetch through the end of the last bucket so it is complete, but not past now.
      const fetchEnd = Math.min(Math.ceil(end.getTime() / step) * step, nowMs);
      const points: Point[] = [];
      for (let from = firstOpen; from < fetchEnd; from += WINDOW_MS) {
        const to = Math.min(from + WINDOW_MS, fetchEnd);
        const page = await fetchChart(id, from, to, signal);
        if (page === null) return null;
        // Windows share their edges; keep each point in exactly one window.
        for (const point of page) if (point[0] >= from && point[0] < to) points.push(point);
      }
      points.sort((a, b) => a[0] - b[0]);
      return toCandles(points, step, firstOpen, end.getTime(), nowMs);
    },
  };
}
