import { type Clock, systemClock } from '../../lib/clock.js';
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

const VENUE = 'binance';
const { badResponse, numberField } = fieldReaders(VENUE);
/** Binance's own cap on klines per request. */
const KLINES_LIMIT = 1000;
/** Binance answers an unlisted symbol with HTTP 400 and this code. */
const INVALID_SYMBOL = -1121;

const INTERVALS: Record<CandleInterval, string> = {
  '1m': '1m',
  '5m': '5m',
  '15m': '15m',
  '1h': '1h',
  '4h': '4h',
  '1d': '1d',
};

function timeField(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw badResponse(`${what} is not a millisecond timestamp`);
  }
  return value;
}

/** True when Binance said the symbol does not exist; any other 400 is a real failure. */
function isInvalidSymbol(response: VenueResponse): boolean {
  if (response.status !== 400) return false;
  if (isRecord(response.body) && response.body.code === INVALID_SYMBOL) return true;
  throw new VenueError(VENUE, 'http_error', `HTTP 400: ${response.text.slice(0, 200)}`);
}

function parseTicker(body: unknown): VenueQuote {
  if (!isRecord(body)) throw badResponse('ticker is not an object');
  return {
    price: numberField(body.lastPrice, 'lastPrice', 'positive'),
    // The pair is quoted in USDT, which is taken as USD.
    volume24hUsd: numberField(body.quoteVolume, 'quoteVolume', 'non-negative'),
    timestamp: new Date(timeField(body.closeTime, 'closeTime')),
  };
}

function parseKline(row: unknown, nowMs: number): Candle {
  if (!Array.isArray(row) || row.length < 8) throw badResponse('kline is not an array of 8+ fields');
  const closeTime = timeField(row[6], 'kline close time');
  return {
    openTime: new Date(timeField(row[0], 'kline open time')),
    open: numberField(row[1], 'kline open', 'positive'),
    high: numberField(row[2], 'kline high', 'positive'),
    low: numberField(row[3], 'kline low', 'positive'),
    close: numberField(row[4], 'kline close', 'positive'),
    volumeUsd: numberField(row[7], 'kline quote volume', 'non-negative'),
    // The newest kline is the still-open one; its close time lies in the future.
    closed: closeTime < nowMs,
  };
}

/**
 * Binance spot (USDT pairs). Quotes from the 24h ticker, candles from klines paged forward by open
 * time. The clock decides which candle is still open.
 */
export function createBinanceVenue(
  settings: VenueSettings,
  clock: Clock = systemClock,
): PriceVenue & CandleVenue {
  const get = venueGetter(VENUE, settings, [400], clock);

  return listedVenue({
    name: VENUE,
    serves: (interval) => interval in INTERVALS,

    async quote(symbol, signal) {
      const response = await get('/api/v3/ticker/24hr', { symbol }, signal);
      if (isInvalidSymbol(response)) return null;
      return parseTicker(response.body);
    },

    async candles(symbol, interval, startMs, endMs, signal) {
      const step = INTERVAL_MS[interval];
      const range = new CandleRange(startMs, endMs);
      let cursor = startMs;
      while (cursor < endMs) {
        const response = await get(
          '/api/v3/klines',
          {
            symbol,
            interval: INTERVALS[interval],
            startTime: String(cursor),
            // endTime is inclusive on open time; the range is half-open.
            endTime: String(endMs - 1),
            limit: String(KLINES_LIMIT),
          },
          signal,
        );
        if (isInvalidSymbol(response)) return null;
        if (!Array.isArray(response.body)) throw badResponse('klines is not an array');
        const nowMs = clock.now().getTime();
        let lastOpen = Number.NEGATIVE_INFINITY;
        for (const row of response.body) {
          const candle = parseKline(row, nowMs);
          lastOpen = Math.max(lastOpen, range.add(candle));
        }
        // A short page is the last one; a full page that does not move forward would loop forever.
        if (response.body.length < KLINES_LIMIT || lastOpen + step <= cursor) break;
        cursor = lastOpen + step;
      }
      return range.oldestFirst();
    },
  });
}
