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

interface CandleRow {
  time_ms: number;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: string;
  trades: number;
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
  const rows =
    width * 1000 === step
      ? await db.query<CandleRow>(sql.CANDLES_EXACT, [marketId, plan.outcome, width, from, to])
      : await db.query<CandleRow>(sql.CANDLES, [marketId, plan.outcome, width, from, to, step / 1000]);
  return fillBuckets(rows, plan.firstOpenMs, plan.endMs, step);
}

/**
 * Every bucket opening in [firstOpenMs, endMs) from the first one with a price: a stored bucket as
 * it is, an empty one flat at the last close with volume "0". A row opening before firstOpenMs is
 * the close carried into the range (at most one).
 */
export function fillBuckets(
  rows: readonly CandleRow[],
  firstOpenMs: number,
  endMs: number,
  step: number,
): CandleBody[] {
  // The range's rows oldest first (each branch of the statement reads in its index order; sorted
  // here only if not), walked beside the buckets: no map, no lookup per bucket.
  let last: number | null = null;
  const stored: CandleRow[] = [];
  let ordered = true;
  for (const r of rows) {
    if (Number(r.time_ms) < firstOpenMs) last = r.close;
    else {
      const previous = stored.at(-1);
      if (previous && Number(previous.time_ms) > Number(r.time_ms)) ordered = false;
      stored.push(r);
    }
  }
  if (!ordered) stored.sort((a, b) => Number(a.time_ms) - Number(b.time_ms));
  const candles: CandleBody[] = [];
  let next = 0;
  for (let t = firstOpenMs; t < endMs; t += step) {
    while (next < stored.length && Number(stored[next]?.time_ms) < t) next++;
    const row = stored[next];
    const time = isoUtc(t);
    if (row && Number(row.time_ms) === t) {
      candles.push({
        time,
        open: row.open,
        high: row.high,
        low: row.low,
        close: row.close,
        volume: row.volume,
        trades: Number(row.trades),
      });
      last = row.close;
    } else if (last !== null) {
      candles.push({ time, open: last, high: last, low: last, close: last, volume: '0', trades: 0 });
    }
  }
  return candles;
}
