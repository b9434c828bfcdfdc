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
import { fieldReaders, isRecord, venueGetter } from './http.js';
import { listedVenue } from './listed-venue.js';

const VENUE = 'kraken';
const { badResponse, numberField } = fieldReaders(VENUE);
const UNKNOWN_PAIR = 'EQuery:Unknown asset pair';
const RATE_LIMIT_ERRORS = ['EAPI:Rate limit exceeded', 'EGeneral:Too many requests'];

/** OHLC interval in minutes. */
const INTERVAL_MINUTES: Record<CandleInterval, number> = {
  '1m': 1,
  '5m': 5,
  '15m': 15,
  '1h': 60,
  '4h': 240,
  '1d': 1440,
};

/**
 * Kraken answers API errors with HTTP 200 and an `error` array. Returns the single market's entry
 * of `result`, or null when the pair is unknown. The entry sits under Kraken's own pair name
 * (XBTUSD → XXBTZUSD), so it is taken as the one key beside `last` rather than looked up.
 */
function readResult(body: unknown): unknown {
  if (!isRecord(body) || !Array.isArray(body.error)) throw badResponse('no error array in the envelope');
  // Entries starting with W are warnings that come with a usable result.
  const errors = body.error.filter((e): e is string => typeof e === 'string' && e.startsWith('E'));
  if (errors.includes(UNKNOWN_PAIR)) return null;
  if (errors.some((e) => RATE_LIMIT_ERRORS.includes(e))) {
    throw new VenueError(VENUE, 'rate_limited', errors.join('; '));
  }
  if (errors.length > 0) throw new VenueError(VENUE, 'upstream_error', errors.join('; '));
  if (!isRecord(body.result)) throw badResponse('result is not an object');
  const keys = Object.keys(body.result).filter((k) => k !== 'last');
  const [key] = keys;
  if (keys.length !== 1 || key === undefined)
    throw badResponse(`expected one market in result, got ${keys.length}`);
  return body.result[key];
}

function pairField(entry: Record<string, unknown>, field: string, index: number): unknown {
  const value = entry[field];
  return Array.isArray(value) ? value[index] : undefined;
}

function parseTicker(entry: unknown): VenueQuote {
  if (!isRecord(entry)) throw badResponse('ticker entry is not an object');
  // v[1] and p[1] are the rolling 24h base volume and VWAP; their product is the USD volume.
  const volume = numberField(pairField(entry, 'v', 1), 'v[1]', 'non-negative');
  const vwap = numberField(pairField(entry, 'p', 1), 'p[1]', 'non-negative');
  return {
    price: numberField(pairField(entry, 'c', 0), 'c[0]', 'positive'),
    volume24hUsd: volume * vwap,
    // The ticker carries no timestamp; the receipt time stands in.
    timestamp: null,
  };
}

function parseOhlc(row: unknown, closed: boolean): Candle {
  if (!Array.isArray(row) || row.length < 7) throw badResponse('OHLC row is not an array of 8 fields');
  const [time, open, high, low, close, vwap, volume] = row;
  if (typeof time !== 'number' || !Number.isSafeInteger(time) || time <= 0) {
    throw badResponse('OHLC time is not a unix timestamp');
  }
  return {
    openTime: new Date(time * 1000),
    open: numberField(open, 'OHLC open', 'positive'),
    high: numberField(high, 'OHLC high', 'positive'),
    low: numberField(low, 'OHLC low', 'positive'),
    close: numberField(close, 'OHLC close', 'positive'),
    volumeUsd:
      numberField(volume, 'OHLC volume', 'non-negative') * numberField(vwap, 'OHLC vwap', 'non-negative'),
    closed,
  };
}

/**
 * Kraken spot (USD pairs). Quotes from Ticker, candles from OHLC. OHLC only ever serves the 720
 * most recent buckets whatever `since` says, so one request is all there is to ask; older
 * buckets are simply missing from the answer.
 */
export function createKrakenVenue(
  settings: VenueSettings,
  clock: Clock = systemClock,
): PriceVenue & CandleVenue {
  const get = venueGetter(VENUE, settings, [], clock);

  return listedVenue({
    name: VENUE,
    serves: (interval) => interval in INTERVAL_MINUTES,

    async quote(pair, signal) {
      const response = await get('/0/public/Ticker', { pair }, signal);
      const entry = readResult(response.body);
      return entry === null ? null : parseTicker(entry);
    },

    async candles(pair, interval, startMs, endMs, signal) {
      // Written this way so an Invalid Date (NaN) also yields nothing rather than a bad request.
      if (!(startMs < endMs)) return [];
      const response = await get(
        '/0/public/OHLC',
        {
          pair,
          interval: String(INTERVAL_MINUTES[interval]),
          // One second early, so the bucket opening exactly at `start` is in whether `since` is
          // inclusive or exclusive.
          since: String(Math.floor(startMs / 1000) - 1),
        },
        signal,
      );
      const rows = readResult(response.body);
      if (rows === null) return null;
      if (!Array.isArray(rows)) throw badResponse('OHLC entry is not an array');
      const range = new CandleRange(startMs, endMs);
      rows.forEach((row, index) => {
        // The last row is the current, uncommitted bucket.
        const candle = parseOhlc(row, index < rows.length - 1);
        range.add(candle);
      });
      return range.oldestFirst();
    },
  });
}
