import { type Clock, systemClock } from '../../lib/clock.js';
import { parseIsoTimestamp } from '../../lib/time.js';
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
import { CandleRange } from './candle-range.js';
import { fieldReaders, isRecord, type VenueResponse, venueGetter } from './http.js';
import { listedVenue } from './listed-venue.js';

const VENUE = 'coinbase';
const { badResponse, numberField } = fieldReaders(VENUE);
/** Coinbase rejects a candles request spanning more than 300 buckets. */
const CANDLES_PER_REQUEST = 300;

/** Granularity in seconds. Coinbase has no 4h granularity (21600 is 6h), so 4h is not served. */
const GRANULARITY_S: Partial<Record<CandleInterval, number>> = {
  '1m': 60,
  '5m': 300,
  '15m': 900,
  '1h': 3600,
  '1d': 86400,
};

/** Coinbase answers an unknown product with 404 {"message":"NotFound"}; other 404s are failures. */
function isNotFound(response: VenueResponse): boolean {
  if (response.status !== 404) return false;
  if (isRecord(response.body) && typeof response.body.message === 'string') return true;
  throw new VenueError(VENUE, 'http_error', 'HTTP 404 without a Coinbase error body');
}

function parseTicker(body: unknown): VenueQuote {
  if (!isRecord(body)) throw badResponse('ticker is not an object');
  const price = numberField(body.price, 'price', 'positive');
  // The ticker's volume is in the base asset over 24h.
  const volume = numberField(body.volume, 'volume', 'non-negative');
  const timestamp = typeof body.time === 'string' ? parseIsoTimestamp(body.time) : null;
  if (!timestamp) throw badResponse('time is not an ISO timestamp');
  return { price, volume24hUsd: volume * price, timestamp };
}

function parseCandle(row: unknown, stepMs: number, nowMs: number): Candle {
  if (!Array.isArray(row) || row.length < 6) throw badResponse('candle is not an array of 6 fields');
  const [time, low, high, open, close, volume] = row;
  if (typeof time !== 'number' || !Number.isSafeInteger(time) || time <= 0) {
    throw badResponse('candle time is not a unix timestamp');
  }
  const closePrice = numberField(close, 'candle close', 'positive');
  const openMs = time * 1000;
  return {
    openTime: new Date(openMs),
    open: numberField(open, 'candle open', 'positive'),
    high: numberField(high, 'candle high', 'positive'),
    low: numberField(low, 'candle low', 'positive'),
    close: closePrice,
    volumeUsd: numberField(volume, 'candle volume', 'non-negative') * closePrice,
    closed: openMs + stepMs <= nowMs,
  };
}

/**
 * Coinbase Exchange (USD products). Quotes from the product ticker, candles in windows of 300
 * buckets (the per-request cap). The clock decides which candle is still open.
 */
export function createCoinbaseVenue(
  settings: VenueSettings,
  clock: Clock = systemClock,
): PriceVenue & CandleVenue {
  const get = venueGetter(VENUE, settings, [404], clock);

  return listedVenue({
    name: VENUE,
    // Without a granularity for the interval there is nothing Coinbase can answer, as if unlisted.
    serves: (interval) => GRANULARITY_S[interval] !== undefined,

    async quote(product, signal) {
      const response = await get(`/products/${encodeURIComponent(product)}/ticker`, {}, signal);
      if (isNotFound(response)) return null;
      return parseTicker(response.body);
    },

    async candles(product, interval, startMs, endMs, signal) {
      const granularity = GRANULARITY_S[interval];
      if (granularity === undefined) return null;
      const step = INTERVAL_MS[interval];
      const range = new CandleRange(startMs, endMs);
      // Buckets are aligned to the interval; one that opened before `start` is not wanted.
      for (
        let cursor = Math.ceil(startMs / step) * step;
        cursor < endMs;
        cursor += CANDLES_PER_REQUEST * step
      ) {
        const windowEnd = Math.min(cursor + CANDLES_PER_REQUEST * step, endMs);
        const response = await get(
          `/products/${encodeURIComponent(product)}/candles`,
          {
            granularity: String(granularity),
            start: new Date(cursor).toISOString(),
            end: new Date(windowEnd).toISOString(),
          },
          signal,
        );
        if (isNotFound(response)) return null;
        if (!Array.isArray(response.body)) throw badResponse('candles is not an array');
        const nowMs = clock.now().getTime();
        for (const row of response.body) {
          const candle = parseCandle(row, step, nowMs);
          // Coinbase's end is inclusive, so a window's last row repeats the next window's first.
          range.add(candle);
        }
      }
      // Coinbase sends newest first.
      return range.oldestFirst();
    },
  });
}
