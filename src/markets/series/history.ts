import Type, { type Static } from 'typebox';
import type { Queryable } from '../../db/database.js';
import { AppError, type ValidationProblem } from '../../errors.js';
import { MAX_DATA_POINTS, MAX_RANGE_HOURS, resolveRange } from '../../historical/index.js';
import { timestampRules } from '../../http/schemas.js';
import { isoUtc, parseIsoTimestamp } from '../../lib/time.js';
import { CANDLE_INTERVALS, type CandleInterval, INTERVAL_MS } from '../../prices/index.js';
import * as sql from './sql.js';

/**
 * An outcome's price history (docs/markets.md#history): OHLC buckets merged from the candles kept
 * at ingestion, flat buckets carrying the last close, nothing before the first trade. Ranges and
 * their limits are those of the historical price route (docs/prices.md#limits).
 */

export const DEFAULT_HISTORY_INTERVAL: CandleInterval = '1h';
const HOUR_MS = 3_600_000;

/** The stored width (seconds) a history of each interval reads: the widest that divides it. */
export const STORED_WIDTH: Record<CandleInterval, number> = {
  '1m': 60,
  '5m': 60,
  '15m': 60,
  '1h': 3600,
  '4h': 3600,
  '1d': 86400,
};

export const HistoryQuery = Type.Object(
  {
    outcome: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 99, default: 0, description: 'Outcome index; default 0' }),
    ),
    interval: Type.Optional(
      Type.Enum(CANDLE_INTERVALS, {
        default: DEFAULT_HISTORY_INTERVAL,
        description:
          'Bucket size; maximum range 24 h (1m), 7 d (5m), 14 d (15m), 30 d (1h), 90 d (4h), 365 d (1d), and at ' +
          `most ${MAX_DATA_POINTS} buckets`,
      }),
    ),
    startTime: Type.Optional(
      Type.String({
        description:
          'ISO 8601 with a zone, before endTime; default: the longest range the interval allows (at most ' +
          `${MAX_DATA_POINTS} buckets, the unfinished one included) before endTime`,
        ...timestampRules(),
      }),
    ),
    endTime: Type.Optional(
      Type.String({
        description:
          'ISO 8601 with a zone, exclusive; default now (the unfinished bucket included); later is clamped to now',
        ...timestampRules(),
      }),
    ),
  },
  { additionalProperties: false },
);
export type HistoryQueryInput = Static<typeof HistoryQuery>;

export const Candle = Type.Object(
  {
    time: Type.String({ description: 'Start of the bucket (ISO 8601, UTC, on an interval boundary)' }),
    open: Type.Integer({ minimum: 0, maximum: 10_000, description: 'Basis points' }),
    high: Type.Integer({ minimum: 0, maximum: 10_000 }),
    low: Type.Integer({ minimum: 0, maximum: 10_000 }),
    close: Type.Integer({ minimum: 0, maximum: 10_000 }),
    volume: Type.String({
      pattern: '^\\d+$',
      description: 'Shares traded in the bucket (integer string); "0" in a flat bucket',
    }),
    trades: Type.Integer({ minimum: 0, description: 'Trades in the bucket; 0 in a flat bucket' }),
  },
  { title: 'MarketCandle', additionalProperties: false },
);
export type CandleBody = Static<typeof Candle>;

export const MarketHistory = Type.Object(
  {
    marketId: Type.String(),
    outcome: Type.Integer({ minimum: 0 }),
    interval: Type.Enum(CANDLE_INTERVALS),
    startTime: Type.String({ description: 'startTime aligned down to the interval (UTC)' }),
    endTime: Type.String({ description: 'endTime as used (exclusive): clamped to now when it was later' }),
    candles: Type.Array(Candle, {
      description:
        'Oldest first, one per bucket from the first trade on (or from startTime when the outcome traded ' +
        'before it); a bucket without trades carries the previous close with volume "0"',
    }),
  },
  { additionalProperties: false },
);
export type MarketHistoryBody = Static<typeof MarketHistory>;

export interface HistoryPlan {
  outcome: number;
  interval: CandleInterval;
  firstOpenMs: number;
  endMs: number;
}

/** Checks a history query against now: its timestamps, range and point limits (VALIDATION_ERROR, INVALID_TIMESTAMP). */
export function planHistory(query: HistoryQueryInput, now: Date): HistoryPlan {
  const interval = query.interval ?? DEFAULT_HISTORY_INTERVAL;
  const step = INTERVAL_MS[interval];
  const problems: ValidationProblem[] = [];
  const expected = 'is not an ISO 8601 timestamp with a zone (e.g. 2026-11-01T00:00:00Z)';
  const parse = (field: 'startTime' | 'endTime') => {
    const text = query[field];
    if (text === undefined) return undefined;
    const parsed = parseIsoTimestamp(text);
    if (!parsed) problems.push({ path: `query.${field}`, message: expected });
    return parsed ?? undefined;
  };
  const startAsked = parse('startTime');
  const endAsked = parse('endTime');
  if (problems.length > 0) {
    throw new AppError('INVALID_TIMESTAMP', problems.map((p) => `${p.path} ${p.message}`).join('; '), {
      details: { problems },
    });
  }
  const end = endAsked ?? now;
  let start = startAsked;
  if (!start) {
    // The longest default: the interval's maximum range, at most MAX_DATA_POINTS buckets counting
    // the one holding `end`.
    const buckets = Math.min(MAX_DATA_POINTS, Math.floor((MAX_RANGE_HOURS[interval] * HOUR_MS) / step));
    const lastOpen = Math.floor((end.getTime() - 1) / step) * step;
    start = new Date(
      Math.max(lastOpen - (buckets - 1) * step, end.getTime() - MAX_RANGE_HOURS[interval] * HOUR_MS),
    );
  }
  const range = resolveRange(start, end, interval, now);
  return { outcome: query.outcome ?? 0, interval, firstOpenMs: range.firstOpenMs, endMs: range.endMs };
}

/** The one row a history's statement answers (sql.ts: CANDLES, CANDLES_EXACT). */
export interface StoredCandles {
  /** The close of the last stored candle before the range; null when there is none. */
  carried: number | null;
  /** The range's candles, `seconds,open,high,low,close,trades,volume` each, `;` between them, oldest first; null when none. */
  candles: string | null;
}

/**
 * The candles of a planned history: one statement (one round trip) reading the stored candles of
 * the range by primary key, and the last close before it.
 */
export async function readHistory(db: Queryable, marketId: string, plan: HistoryPlan): Promise<CandleBody[]> {
  const width = STORED_WIDTH[plan.interval];
  const step = INTERVAL_MS[plan.interval];
  const from = new Date(plan.firstOpenMs).toISOString();
  const to = new Date(plan.endMs).toISOString();
  const [row] =
    width * 1000 === step
      ? await db.query<StoredCandles>(sql.CANDLES_EXACT, [marketId, plan.outcome, width, from, to])
      : await db.query<StoredCandles>(sql.CANDLES, [marketId, plan.outcome, width, from, to, step / 1000]);
  return fillBuckets(row ?? { carried: null, candles: null }, plan.firstOpenMs, plan.endMs, step);
}

const MINUS = 45;
const ZERO = 48;
const NINE = 57;

/**
 * Every bucket opening in [firstOpenMs, endMs) from the first one with a price: a stored bucket as
 * it is, an empty one flat at the last close with volume "0". The stored candles are read from their
 * text in step with the buckets (no row objects, no lookup per bucket); each is a bucket's start, so
 * a bucket without one is flat.
 */
export function fillBuckets(
  stored: StoredCandles,
  firstOpenMs: number,
  endMs: number,
  step: number,
): CandleBody[] {
  const text = stored.candles ?? '';
  let last = stored.carried;
  let at = 0;
  // The integer field at `at` (its digits, by hand: no substring, no Number()); `at` moves past the
  // comma after it.
  const integer = (): number => {
    let sign = 1;
    if (text.charCodeAt(at) === MINUS) {
      sign = -1;
      at++;
    }
    let n = 0;
    for (let c = text.charCodeAt(at); c >= ZERO && c <= NINE; c = text.charCodeAt(++at))
      n = n * 10 + (c - ZERO);
    at++;
    return sign * n;
  };
  let nextMs = text.length > 0 ? integer() * 1000 : Number.POSITIVE_INFINITY;
  // The next stored candle's start; a candle not on a bucket's start (none is stored so) is passed over.
  const skip = () => {
    const end = text.indexOf(';', at);
    at = end + 1;
    nextMs = end < 0 ? Number.POSITIVE_INFINITY : integer() * 1000;
  };
  const candles: CandleBody[] = [];
  for (let t = firstOpenMs; t < endMs; t += step) {
    while (nextMs < t) skip();
    if (nextMs === t) {
      const open = integer();
      const high = integer();
      const low = integer();
      const close = integer();
      const trades = integer();
      const end = text.indexOf(';', at);
      const volume = end < 0 ? text.slice(at) : text.slice(at, end);
      candles.push({ time: isoUtc(t), open, high, low, close, volume, trades });
      last = close;
      if (end < 0) nextMs = Number.POSITIVE_INFINITY;
      else {
        at = end + 1;
        nextMs = integer() * 1000;
      }
    } else if (last !== null) {
      candles.push({
        time: isoUtc(t),
        open: last,
        high: last,
        low: last,
        close: last,
        volume: '0',
        trades: 0,
      });
    }
  }
  return candles;
}
