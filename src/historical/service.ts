import type { AccountMode } from '../accounts/index.js';
import type { Queryable } from '../db/database.js';
import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { metrics } from '../metrics/metrics.js';
import {
  type Candle,
  type CandleVenue,
  type LiveVenueName,
  type PriceTarget,
  VenueError,
  type VenueFailure,
  type VenueName,
} from '../prices/index.js';
import { type BucketRange, bucketOpens, type Gap, missingGaps } from './buckets.js';
import { type BucketCandle, combineBucket } from './combine.js';
import { sandboxBuckets, sandboxSymbol } from './sandbox.js';
import * as sql from './sql.js';

/** One point of a series: the combined price of one bucket. */
export interface HistoricalPoint {
  /** Open time of the bucket. */
  timestamp: string;
  price: number;
  /** Contributing venues, comma-separated, in a fixed order. */
  source: string;
  sourceCount: number;
  /** False for the still-open bucket, whose price is its latest close so far. */
  isComplete: boolean;
}

/** A venue that gave nothing for this request, and why. */
export interface UnavailableCandleSource {
  name: VenueName;
  reason: VenueFailure | 'not_listed';
}

export interface HistoricalSeries {
  dataPoints: HistoricalPoint[];
  unavailableSources: UnavailableCandleSource[];
}

export interface HistoricalRequest {
  target: PriceTarget;
  /** How the request named the token, for error messages. */
  requested: string;
  range: BucketRange;
  mode: AccountMode;
}

/**
 * A bucket the venue had no candle for is remembered as empty only once it closed this long ago:
 * a venue may publish a just-closed bucket a few seconds late, and an early marker would hide it
 * for good.
 */
export const MARKER_SETTLE_MS = 120_000;

interface StoredRow {
  venue: string;
  open_time: Date;
  close: number | null;
  volume_usd: number | null;
}

interface VenueFetch {
  venue: LiveVenueName;
  /** Gaps the venue answered, with every candle it gave for them. */
  answered: { gap: Gap; candles: Candle[] }[];
  failure: UnavailableCandleSource['reason'] | null;
}

function point(
  openMs: number,
  candles: BucketCandle[],
  isComplete: boolean,
  tolerance: number,
): HistoricalPoint | null {
  const combined = combineBucket(candles, tolerance);
  if (!combined) return null;
  return {
    timestamp: new Date(openMs).toISOString(),
    price: combined.price,
    source: combined.venues.join(','),
    sourceCount: combined.venues.length,
    isComplete,
  };
}

/**
 * Historical price series: per-bucket combinations of venue candles. Live accounts read the
 * candles stored in PostgreSQL and ask each venue only for the buckets it has not answered before;
 * sandbox accounts get a deterministic series from the sandbox feed and never touch a venue or the
 * table.
 */
export class HistoricalService {
  constructor(
    private readonly db: Queryable,
    private readonly venues: readonly CandleVenue[],
    private readonly clock: Clock,
    private readonly rules: { outlierTolerance: number },
  ) {}

  async series(request: HistoricalRequest): Promise<HistoricalSeries> {
    return request.mode === 'sandbox' ? this.sandboxSeries(request) : this.liveSeries(request);
  }

  private sandboxSeries({ target, requested, range }: HistoricalRequest): HistoricalSeries {
    const symbol = sandboxSymbol(target);
    if (symbol === null) throw this.notFound(requested, range);
    const nowMs = this.clock.now().getTime();
    const dataPoints: HistoricalPoint[] = [];
    for (const bucket of sandboxBuckets(symbol, range, nowMs)) {
      const p = point(bucket.openMs, bucket.candles, bucket.closed, this.rules.outlierTolerance);
      if (p) dataPoints.push(p);
    }
    return { dataPoints, unavailableSources: [] };
  }

  private async liveSeries({ target, requested, range }: HistoricalRequest): Promise<HistoricalSeries> {
    const venues = this.venues.filter((v) => v.canServeCandles(target, range.interval));
    if (venues.length === 0) throw this.notFound(requested, range);
    const nowMs = this.clock.now().getTime();
    const opens = bucketOpens(range);

    const rows = await this.db.query<StoredRow>(sql.SELECT_CANDLES, [
      target.key,
      range.interval,
      new Date(range.firstOpenMs),
      new Date(range.endMs),
      venues.map((v) => v.name),
    ]);
    const stored = new Map<string, Map<number, StoredRow>>(venues.map((v) => [v.name, new Map()]));
    for (const row of rows) stored.get(row.venue)?.set(row.open_time.getTime(), row);

    const fetches = await Promise.all(
      venues.map((venue) => {
        const have = new Set(stored.get(venue.name)?.keys());
        const gaps = missingGaps(opens, have, range.stepMs);
        return this.fetchGaps(venue, target, range, gaps, nowMs);
      }),
    );
    await this.store(target, range, fetches, nowMs);

    const dataPoints: HistoricalPoint[] = [];
    const fresh = new Map<string, Map<number, Candle>>();
    for (const f of fetches) {
      const byOpen = new Map<number, Candle>();
      for (const { candles } of f.answered) for (const c of candles) byOpen.set(c.openTime.getTime(), c);
      fresh.set(f.venue, byOpen);
    }
    for (const openMs of opens) {
      const candles: BucketCandle[] = [];
      for (const venue of venues) {
        const candle = fresh.get(venue.name)?.get(openMs);
        const row = stored.get(venue.name)?.get(openMs);
        if (candle) candles.push({ venue: venue.name, close: candle.close, volumeUsd: candle.volumeUsd });
        else if (row && row.close !== null)
          candles.push({ venue: venue.name, close: row.close, volumeUsd: row.volume_usd });
      }
      const p = point(openMs, candles, openMs + range.stepMs <= nowMs, this.rules.outlierTolerance);
      if (p) dataPoints.push(p);
    }

    const unavailableSources = fetches
      .filter((f) => f.failure !== null)
      .map((f) => ({ name: f.venue, reason: f.failure as UnavailableCandleSource['reason'] }));
    if (dataPoints.length === 0) {
      const failed = unavailableSources.filter((u) => u.reason !== 'not_listed');
      const nothingStored = rows.length === 0;
      if (failed.length > 0) {
        throw new AppError(
          'PRICE_UNAVAILABLE',
          `No price source could give history for ${requested} right now; retry shortly`,
          { details: { unavailableSources } },
        );
      }
      if (nothingStored && unavailableSources.length === venues.length) throw this.notFound(requested, range);
    }
    return { dataPoints, unavailableSources };
  }

  /**
   * Asks one venue for its gaps, oldest first, stopping at the first failure: what it answered
   * before stays usable, nothing after is asked or assumed.
   */
  private async fetchGaps(
    venue: CandleVenue,
    target: PriceTarget,
    range: BucketRange,
    gaps: Gap[],
    nowMs: number,
  ): Promise<VenueFetch> {
    const result: VenueFetch = { venue: venue.name, answered: [], failure: null };
    for (const gap of gaps) {
      try {
        // Each adapter applies its own timeout per call; this signal only satisfies the port.
        const candles = await venue.fetchCandles(
          target,
          range.interval,
          new Date(gap.startMs),
          // The last gap may end with the open bucket: ask no further than now.
          new Date(Math.min(gap.endMs, nowMs)),
          new AbortController().signal,
        );
        metrics.venueCalled(venue.name, 'candles', candles === null ? 'not_listed' : 'ok');
        if (candles === null) {
          result.failure = 'not_listed';
          break;
        }
        const inGap = candles.filter((c) => {
          const openMs = c.openTime.getTime();
          return openMs >= gap.startMs && openMs < gap.endMs && (openMs - gap.startMs) % range.stepMs === 0;
        });
        result.answered.push({ gap, candles: inGap });
      } catch (err) {
        result.failure = err instanceof VenueError ? err.kind : 'upstream_error';
        metrics.venueCalled(venue.name, 'candles', result.failure);
        break;
      }
    }
    return result;
  }

  /**
   * Stores what the venues answered, for closed buckets only: candles the venue itself calls closed
   * and whose bucket ended by our clock, and empty markers for settled buckets of an answered gap
   * that came back without a candle. The open bucket is never stored, as a candle or a marker.
   */
  private async store(target: PriceTarget, range: BucketRange, fetches: VenueFetch[], nowMs: number) {
    const columns = {
      venue: [] as string[],
      openMs: [] as number[],
      open: [] as (number | null)[],
      high: [] as (number | null)[],
      low: [] as (number | null)[],
      close: [] as (number | null)[],
      volumeUsd: [] as (number | null)[],
    };
    const add = (venue: string, openMs: number, c: Candle | null) => {
      columns.venue.push(venue);
      columns.openMs.push(openMs);
      columns.open.push(c ? c.open : null);
      columns.high.push(c ? c.high : null);
      columns.low.push(c ? c.low : null);
      columns.close.push(c ? c.close : null);
      columns.volumeUsd.push(c ? c.volumeUsd : null);
    };
    for (const f of fetches) {
      for (const { gap, candles } of f.answered) {
        const byOpen = new Map(candles.map((c) => [c.openTime.getTime(), c]));
        for (let openMs = gap.startMs; openMs < gap.endMs; openMs += range.stepMs) {
          const endMs = openMs + range.stepMs;
          const candle = byOpen.get(openMs);
          if (candle) {
            if (candle.closed && endMs <= nowMs) add(f.venue, openMs, candle);
          } else if (endMs <= nowMs - MARKER_SETTLE_MS) {
            add(f.venue, openMs, null);
          }
        }
      }
    }
    if (columns.venue.length === 0) return;
    await this.db.query(sql.INSERT_CANDLES, [
      target.key,
      range.interval,
      columns.venue,
      columns.openMs,
      columns.open,
      columns.high,
      columns.low,
      columns.close,
      columns.volumeUsd,
    ]);
  }

  private notFound(requested: string, range: BucketRange): AppError {
    return new AppError(
      'SYMBOL_NOT_FOUND',
      `No price source has ${range.interval} history for ${requested}`,
      {
        extras: { symbol: requested },
      },
    );
  }
}
