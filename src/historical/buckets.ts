import { AppError, type ValidationProblem } from '../errors.js';
import { type CandleInterval, INTERVAL_MS } from '../prices/index.js';

/** At most this many data points in one series (docs/prices.md#limits). */
export const MAX_DATA_POINTS = 1000;

const HOUR_MS = 3_600_000;

/** docs/prices.md#limits: the longest time range (endTime − startTime) one request may ask for, per interval. */
export const MAX_RANGE_HOURS: Record<CandleInterval, number> = {
  '1m': 24,
  '5m': 7 * 24,
  '15m': 14 * 24,
  '1h': 30 * 24,
  '4h': 90 * 24,
  '1d': 365 * 24,
};

/** Start of the UTC-aligned bucket holding `ms`. */
export function bucketOpen(ms: number, interval: CandleInterval): number {
  const step = INTERVAL_MS[interval];
  return Math.floor(ms / step) * step;
}

/**
 * The buckets a series covers: those whose open time lies in [firstOpenMs, endMs). `firstOpenMs` is
 * the requested start aligned down to the interval; `endMs` is the requested end, clamped to now.
 */
export interface BucketRange {
  interval: CandleInterval;
  stepMs: number;
  firstOpenMs: number;
  endMs: number;
}

/** Open times of every bucket in the range, oldest first. */
export function bucketOpens(range: BucketRange): number[] {
  const opens: number[] = [];
  for (let t = range.firstOpenMs; t < range.endMs; t += range.stepMs) opens.push(t);
  return opens;
}

/** Buckets with an open time in [bucketOpen(start), end). */
export function countBuckets(startMs: number, endMs: number, interval: CandleInterval): number {
  const first = bucketOpen(startMs, interval);
  return endMs > first ? Math.ceil((endMs - first) / INTERVAL_MS[interval]) : 0;
}

/**
 * Checks a requested range and turns it into the buckets to serve. `start >= end` and a start at
 * or after now are refused; an end after now is clamped to now. The limits of docs/prices.md#limits apply to the
 * range as asked (before clamping): end − start at most the interval's maximum, and at most
 * MAX_DATA_POINTS buckets. Violations throw VALIDATION_ERROR naming the limit in `details.limit`.
 */
export function resolveRange(start: Date, end: Date, interval: CandleInterval, now: Date): BucketRange {
  const startMs = start.getTime();
  const endMs = end.getTime();
  const nowMs = now.getTime();
  if (startMs >= endMs) {
    throw new AppError('VALIDATION_ERROR', 'startTime must be before endTime', {
      details: { problems: [{ path: 'query.endTime', message: 'must be after startTime' }] },
    });
  }
  if (startMs >= nowMs) {
    throw new AppError('VALIDATION_ERROR', 'The range is in the future: startTime must be before now', {
      details: {
        problems: [{ path: 'query.startTime', message: `is not before now (${now.toISOString()})` }],
      },
    });
  }

  const problems: ValidationProblem[] = [];
  const limit: Record<string, unknown> = { interval };
  const maxRangeMs = MAX_RANGE_HOURS[interval] * HOUR_MS;
  if (endMs - startMs > maxRangeMs) {
    problems.push({
      path: 'query.endTime',
      message: `is more than ${MAX_RANGE_HOURS[interval]} hours after startTime, the longest range for interval ${interval}`,
    });
    limit.maxRangeHours = MAX_RANGE_HOURS[interval];
  }
  const points = countBuckets(startMs, endMs, interval);
  if (points > MAX_DATA_POINTS) {
    problems.push({
      path: 'query.endTime',
      message: `the range holds ${points} data points of ${interval}; at most ${MAX_DATA_POINTS}`,
    });
    limit.maxDataPoints = MAX_DATA_POINTS;
  }
  if (problems.length > 0) {
    throw new AppError('VALIDATION_ERROR', `The range exceeds the limits for interval ${interval}`, {
      details: { problems, limit },
    });
  }

  return {
    interval,
    stepMs: INTERVAL_MS[interval],
    firstOpenMs: bucketOpen(startMs, interval),
    endMs: Math.min(endMs, nowMs),
  };
}

/** A contiguous run of buckets, [startMs, endMs). */
export interface Gap {
  startMs: number;
  endMs: number;
}

/**
 * A venue missing more separate runs of buckets than this gets fewer, longer requests instead:
 * stored buckets inside a merged run are fetched again (and ignored on insert), which costs less
 * than many calls.
 */
export const MAX_GAPS_PER_VENUE = 4;

/**
 * The runs of consecutive buckets among `opens` that are not in `have`, oldest first. Beyond
 * MAX_GAPS_PER_VENUE runs, the two separated by the fewest stored buckets are merged, repeatedly.
 */
export function missingGaps(opens: readonly number[], have: ReadonlySet<number>, stepMs: number): Gap[] {
  const gaps: Gap[] = [];
  for (const openMs of opens) {
    if (have.has(openMs)) continue;
    const last = gaps[gaps.length - 1];
    if (last && last.endMs === openMs) last.endMs = openMs + stepMs;
    else gaps.push({ startMs: openMs, endMs: openMs + stepMs });
  }
  const spacing = (i: number) => (gaps[i + 1] as Gap).startMs - (gaps[i] as Gap).endMs;
  while (gaps.length > MAX_GAPS_PER_VENUE) {
    let closest = 0;
    for (let i = 1; i < gaps.length - 1; i++) if (spacing(i) < spacing(closest)) closest = i;
    const [left, right] = [gaps[closest] as Gap, gaps[closest + 1] as Gap];
    gaps.splice(closest, 2, { startMs: left.startMs, endMs: right.endMs });
  }
  return gaps;
}
