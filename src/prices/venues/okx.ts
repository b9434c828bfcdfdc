import { type Clock, systemClock } from '../../lib/clock.js';
import {
  type Candle,
  type CandleInterval,
  type CandleVenue,
  type PriceVenue,
  VenueError,
  type VenueQuote,
  type VenueSettings,
} from '../types.js';
import { CandleRange } from './candle-range.js';
import { fieldReaders, isRecord, toNumber, type VenueResponse, venueGetter } from './http.js';
import { listedVenue } from './listed-venue.js';

const VENUE = 'okx';
const { badResponse, numberField } = fieldReaders(VENUE);
/** OKX's own cap on candles per request. */
const CANDLES_LIMIT = 300;
const INSTRUMENT_NOT_FOUND = '51001';
const RATE_LIMITED = '50011';

/** OKX bar names; plain 1D is aligned to UTC+8, so the UTC-aligned 1Dutc is used. */
const BARS: Record<CandleInterval, string> = {
  '1m': '1m',
  '5m': '5m',
  '15m': '15m',
  '1h': '1H',
  '4h': '4H',
  '1d': '1Dutc',
};

/** OKX sends millisecond timestamps as strings. */
function timeField(value: unknown, what: string): number {
  const n = toNumber(value);
  if (n === null || !Number.isSafeInteger(n) || n <= 0)
    throw badResponse(`${what} is not a millisecond timestamp`);
  return n;
}

/**
 * OKX reports errors in a string `code`, often with HTTP 200 and sometimes with 400. Returns
 * `data`, or null when the instrument does not exist.
 */
function readData(response: VenueResponse): unknown[] | null {
  const body = response.body;
  if (!isRecord(body) || typeof body.code !== 'string') {
    if (response.status >= 300) throw new VenueError(VENUE, 'http_error', `HTTP ${response.status}`);
    throw badResponse('no code in the envelope');
  }
  const message = `code ${body.code}: ${typeof body.msg === 'string' ? body.msg : ''}`;
  if (body.code === INSTRUMENT_NOT_FOUND) return null;
  if (body.code === RATE_LIMITED) throw new VenueError(VENUE, 'rate_limited', message);
  if (body.code !== '0') throw new VenueError(VENUE, 'upstream_error', message);
  if (response.status >= 300)
    throw new VenueError(VENUE, 'http_error', `HTTP ${response.status} with code 0`);
  if (!Array.isArray(body.data)) throw badResponse('data is not an array');
  return body.data;
}

function parseTicker(data: unknown[]): VenueQuote {
  const ticker = data[0];
  if (!isRecord(ticker)) throw badResponse('data[0] is not a ticker');
  return {
    price: numberField(ticker.last, 'last', 'positive'),
    // For spot instruments volCcy24h is in the quote currency, USDT, taken as USD.
    volume24hUsd: numberField(ticker.volCcy24h, 'volCcy24h', 'non-negative'),
    timestamp: new Date(timeField(ticker.ts, 'ts')),
  };
}

function parseCandle(row: unknown): Candle {
  if (!Array.isArray(row) || row.length < 9) throw badResponse('candle is not an array of 9 fields');
  const [ts, open, high, low, close, , volCcy, , confirm] = row;
  if (confirm !== '0' && confirm !== '1') throw badResponse('candle confirm is not "0" or "1"');
  return {
    openTime: new Date(timeField(ts, 'candle ts')),
    open: numberField(open, 'candle open', 'positive'),
    high: numberField(high, 'candle high', 'positive'),
    low: numberField(low, 'candle low', 'positive'),
    close: numberField(close, 'candle close', 'positive'),
    volumeUsd: numberField(volCcy, 'candle volCcy', 'non-negative'),
    closed: confirm === '1',
  };
}

/**
 * OKX spot (USDT instruments). Quotes from the market ticker, candles paged backwards from `end`
 * (`after` = records earlier than ts), since OKX answers newest first. The candles endpoint only
 * reaches the latest 1,440 buckets; older ones are missing from the answer.
 */
export function createOkxVenue(
  settings: VenueSettings,
  clock: Clock = systemClock,
): PriceVenue & CandleVenue {
  const get = venueGetter(VENUE, settings, [400], clock);

  return listedVenue({
    name: VENUE,
    serves: (interval) => interval in BARS,

    async quote(instId, signal) {
      const data = readData(await get('/api/v5/market/ticker', { instId }, signal));
      return data === null ? null : parseTicker(data);
    },

    async candles(instId, interval, startMs, endMs, signal) {
      const range = new CandleRange(startMs, endMs);
      // `after` is exclusive, so the first page holds exactly the buckets that open before `end`.
      let after = endMs;
      while (after > startMs) {
        const data = readData(
          await get(
            '/api/v5/market/candles',
            { instId, bar: BARS[interval], limit: String(CANDLES_LIMIT), after: String(after) },
            signal,
          ),
        );
        if (data === null) return null;
        let oldest = after;
        for (const row of data) {
          const candle = parseCandle(row);
          oldest = Math.min(oldest, range.add(candle));
        }
        // A short page means OKX has nothing older; a page that does not move back would loop forever.
        if (data.length < CANDLES_LIMIT || oldest >= after) break;
        after = oldest;
      }
      return range.oldestFirst();
    },
  });
}
