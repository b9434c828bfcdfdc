import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import {
  bucketOpen,
  bucketOpens,
  countBuckets,
  MAX_DATA_POINTS,
  MAX_GAPS_PER_VENUE,
  MAX_RANGE_HOURS,
  missingGaps,
  resolveRange,
} from '../../src/historical/buckets.js';
import { CANDLE_INTERVALS, type CandleInterval, INTERVAL_MS } from '../../src/prices/types.js';

const HOUR = 3_600_000;
const NOW = new Date('2026-06-15T12:20:00Z');
const at = (iso: string) => new Date(iso);

function refusal(start: Date, end: Date, interval: CandleInterval, now = NOW): AppError {
  try {
    resolveRange(start, end, interval, now);
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error(`${interval} ${start.toISOString()}..${end.toISOString()} was accepted`);
}

describe('bucket alignment', () => {
  const cases: [CandleInterval, string, string][] = [
    ['1m', '2026-06-15T10:37:42.123Z', '2026-06-15T10:37:00.000Z'],
    ['5m', '2026-06-15T10:37:42.123Z', '2026-06-15T10:35:00.000Z'],
    ['15m', '2026-06-15T10:37:42.123Z', '2026-06-15T10:30:00.000Z'],
    ['1h', '2026-06-15T10:37:42.123Z', '2026-06-15T10:00:00.000Z'],
    // 4h buckets are UTC multiples of 4 hours: 00, 04, 08, 12, 16, 20.
    ['4h', '2026-06-15T10:37:42.123Z', '2026-06-15T08:00:00.000Z'],
    ['1d', '2026-06-15T10:37:42.123Z', '2026-06-15T00:00:00.000Z'],
  ];
  it.each(cases)('%s: %s opens at %s', (interval, time, open) => {
    expect(new Date(bucketOpen(Date.parse(time), interval)).toISOString()).toBe(open);
  });

  it.each(CANDLE_INTERVALS)(
    '%s: a bucket boundary is its own open, one ms earlier is the previous bucket',
    (i) => {
      const step = INTERVAL_MS[i];
      const boundary = Date.parse('2026-06-15T00:00:00Z');
      expect(bucketOpen(boundary, i)).toBe(boundary);
      expect(bucketOpen(boundary - 1, i)).toBe(boundary - step);
      expect(bucketOpen(boundary + step - 1, i)).toBe(boundary);
    },
  );

  it('zone offsets in the input do not move the UTC alignment', () => {
    const range = resolveRange(at('2026-06-15T09:30:00+05:30'), at('2026-06-15T06:00:00Z'), '1h', NOW);
    expect(new Date(range.firstOpenMs).toISOString()).toBe('2026-06-15T04:00:00.000Z');
  });

  it.each(CANDLE_INTERVALS)('%s: the series covers buckets opening in [aligned start, end)', (i) => {
    const step = INTERVAL_MS[i];
    const open = Date.parse('2026-01-01T00:00:00Z');
    // Start inside a bucket, end exactly on a boundary three buckets later: that boundary's bucket is out.
    const range = resolveRange(new Date(open + step / 2), new Date(open + 3 * step), i, NOW);
    expect(range).toEqual({ interval: i, stepMs: step, firstOpenMs: open, endMs: open + 3 * step });
    expect(bucketOpens(range)).toEqual([open, open + step, open + 2 * step]);
    // One ms past the boundary brings the next bucket in.
    const longer = resolveRange(new Date(open + step / 2), new Date(open + 3 * step + 1), i, NOW);
    expect(bucketOpens(longer)).toHaveLength(4);
    expect(countBuckets(open + step / 2, open + 3 * step + 1, i)).toBe(4);
  });
});

describe('range checks', () => {
  it('startTime at or after endTime is refused', () => {
    for (const end of [at('2026-06-15T10:00:00Z'), at('2026-06-15T09:59:59.999Z')]) {
      const err = refusal(at('2026-06-15T10:00:00Z'), end, '1h');
      expect({ code: err.code, message: err.message, details: err.details }).toEqual({
        code: 'VALIDATION_ERROR',
        message: 'startTime must be before endTime',
        details: { problems: [{ path: 'query.endTime', message: 'must be after startTime' }] },
      });
    }
  });

  it('a range starting at or after now is in the future; one starting a ms earlier is served', () => {
    for (const start of [NOW, new Date(NOW.getTime() + HOUR)]) {
      const err = refusal(start, new Date(start.getTime() + 2 * HOUR), '1h');
      expect({ code: err.code, message: err.message, details: err.details }).toEqual({
        code: 'VALIDATION_ERROR',
        message: 'The range is in the future: startTime must be before now',
        details: {
          problems: [{ path: 'query.startTime', message: 'is not before now (2026-06-15T12:20:00.000Z)' }],
        },
      });
    }
    const range = resolveRange(new Date(NOW.getTime() - 1), new Date(NOW.getTime() + HOUR), '1h', NOW);
    expect(range.firstOpenMs).toBe(Date.parse('2026-06-15T12:00:00Z'));
    expect(range.endMs).toBe(NOW.getTime());
  });

  it('an end after now is clamped to now; the open bucket is in the series', () => {
    const range = resolveRange(at('2026-06-15T10:00:00Z'), at('2026-06-16T00:00:00Z'), '1h', NOW);
    expect(range.endMs).toBe(NOW.getTime());
    expect(bucketOpens(range).map((t) => new Date(t).toISOString())).toEqual([
      '2026-06-15T10:00:00.000Z',
      '2026-06-15T11:00:00.000Z',
      '2026-06-15T12:00:00.000Z',
    ]);
  });

  it('the documented maximum ranges', () => {
    expect(MAX_RANGE_HOURS).toEqual({ '1m': 24, '5m': 168, '15m': 336, '1h': 720, '4h': 2160, '1d': 8760 });
    expect(MAX_DATA_POINTS).toBe(1000);
  });
});

describe('limits at their exact boundaries, for every interval', () => {
  // Aligned starts well in the past, so neither the future rule nor clamping interferes.
  const start = at('2025-01-01T00:00:00Z');

  it.each(CANDLE_INTERVALS)('%s: the range limit, exactly and one ms over', (interval) => {
    const maxMs = MAX_RANGE_HOURS[interval] * HOUR;
    const maxBuckets = maxMs / INTERVAL_MS[interval];
    const over = refusal(start, new Date(start.getTime() + maxMs + 1), interval);
    expect(over.code).toBe('VALIDATION_ERROR');
    expect(over.details?.problems).toContainEqual({
      path: 'query.endTime',
      message: `is more than ${MAX_RANGE_HOURS[interval]} hours after startTime, the longest range for interval ${interval}`,
    });
    expect(over.details?.limit).toMatchObject({ interval, maxRangeHours: MAX_RANGE_HOURS[interval] });
    if (maxBuckets <= MAX_DATA_POINTS) {
      // 1h, 4h, 1d: the whole range fits in 1000 points, so exactly the maximum is served.
      const range = resolveRange(start, new Date(start.getTime() + maxMs), interval, NOW);
      expect(bucketOpens(range)).toHaveLength(maxBuckets);
      expect(over.details?.limit).toEqual({ interval, maxRangeHours: MAX_RANGE_HOURS[interval] });
    } else {
      // 1m, 5m, 15m: the maximum range holds more than 1000 buckets, so the point limit refuses it too.
      const exact = refusal(start, new Date(start.getTime() + maxMs), interval);
      expect(exact.details?.limit).toEqual({ interval, maxDataPoints: 1000 });
      expect(over.details?.limit).toEqual({
        interval,
        maxRangeHours: MAX_RANGE_HOURS[interval],
        maxDataPoints: 1000,
      });
    }
  });

  it.each(CANDLE_INTERVALS)('%s: the data point limit, 1000 buckets and one more', (interval) => {
    const step = INTERVAL_MS[interval];
    const maxMs = MAX_RANGE_HOURS[interval] * HOUR;
    if (1000 * step <= maxMs) {
      const range = resolveRange(start, new Date(start.getTime() + 1000 * step), interval, NOW);
      expect(bucketOpens(range)).toHaveLength(1000);
      // One ms more opens bucket 1001.
      const err = refusal(start, new Date(start.getTime() + 1000 * step + 1), interval);
      expect({ code: err.code, details: err.details }).toEqual({
        code: 'VALIDATION_ERROR',
        details: {
          problems: [
            {
              path: 'query.endTime',
              message: `the range holds 1001 data points of ${interval}; at most 1000`,
            },
          ],
          limit: { interval, maxDataPoints: 1000 },
        },
      });
    } else {
      // 1h, 4h, 1d: the range limit caps the points below 1000; an unaligned start adds one bucket at most.
      const unaligned = new Date(start.getTime() + step / 2);
      const range = resolveRange(unaligned, new Date(unaligned.getTime() + maxMs), interval, NOW);
      expect(bucketOpens(range)).toHaveLength(maxMs / step + 1);
    }
  });
});

describe('planning the calls for missing buckets', () => {
  const opens = Array.from({ length: 20 }, (_, i) => i * HOUR);
  const gaps = (have: number[]) =>
    missingGaps(opens, new Set(have.map((i) => i * HOUR)), HOUR).map((g) => [
      g.startMs / HOUR,
      g.endMs / HOUR,
    ]);

  it('asks for each run of consecutive missing buckets', () => {
    expect(gaps([])).toEqual([[0, 20]]);
    expect(gaps(opens.map((t) => t / HOUR))).toEqual([]);
    expect(gaps([0, 1, 5, 6, 7, 19])).toEqual([
      [2, 5],
      [8, 19],
    ]);
  });

  it(`merges the closest runs when there are more than ${MAX_GAPS_PER_VENUE}`, () => {
    // Missing: 0, 2, 5-6, 9, 15, 19 (six runs). Stored islands between them: 1 (1 bucket), 3-4 (2),
    // 7-8 (2), 10-14 (5), 16-18 (3). The two 1- and 2-bucket islands nearest the start go first.
    const have = [1, 3, 4, 7, 8, 10, 11, 12, 13, 14, 16, 17, 18];
    expect(gaps(have)).toEqual([
      [0, 7],
      [9, 10],
      [15, 16],
      [19, 20],
    ]);
  });
});
