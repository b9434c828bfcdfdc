import { LIVE_VENUES, median, SANDBOX_VENUES, type VenueName } from '../prices/index.js';

/** One venue's candle for one bucket, as far as combining needs it. */
export interface BucketCandle {
  venue: VenueName;
  close: number;
  /** USD traded in the bucket; null when the venue does not report it (CoinGecko). */
  volumeUsd: number | null;
}

export interface CombinedBucket {
  price: number;
  /** The venues whose closes make up `price`, in VENUE_ORDER. */
  venues: VenueName[];
}

/** The order venue names appear in `source`, whatever order they were configured or answered in. */
const VENUE_ORDER: readonly VenueName[] = [...LIVE_VENUES, ...SANDBOX_VENUES];

/** Same as the spot VWAP: one bad print cannot drag a median of three or more. */
const MIN_FOR_MEDIAN = 3;

const round = (n: number) => Number(n.toPrecision(12));

/**
 * The price of one bucket from the venues' candles for it:
 *
 * 1. With at least three candles, a close further than `outlierTolerance` (relative) from their
 *    median is dropped, as the spot VWAP drops outlying quotes. If that would drop every candle (an
 *    even split with no majority), none is dropped.
 * 2. Price = Σ(close × volumeUsd) / Σ(volumeUsd) over the candles kept with a positive volume.
 * 3. When no kept candle has a positive volume (only CoinGecko, whose chart has no per-bucket
 *    volume, or buckets without trades), price = the plain mean of the kept closes.
 *
 * Null when no venue has a candle for the bucket: such buckets are omitted, never invented.
 */
export function combineBucket(
  candles: readonly BucketCandle[],
  outlierTolerance: number,
): CombinedBucket | null {
  if (candles.length === 0) return null;
  let kept: readonly BucketCandle[] = candles;
  if (candles.length >= MIN_FOR_MEDIAN) {
    const center = median(candles.map((c) => c.close));
    const near = candles.filter((c) => Math.abs(c.close - center) / center <= outlierTolerance);
    if (near.length > 0) kept = near;
  }
  const weighted = kept.filter((c) => c.volumeUsd !== null && c.volumeUsd > 0);
  let price: number;
  let used: readonly BucketCandle[];
  if (weighted.length > 0) {
    const volume = weighted.reduce((sum, c) => sum + (c.volumeUsd as number), 0);
    price = weighted.reduce((sum, c) => sum + c.close * (c.volumeUsd as number), 0) / volume;
    used = weighted;
  } else {
    price = kept.reduce((sum, c) => sum + c.close, 0) / kept.length;
    used = kept;
  }
  const venues = used.map((c) => c.venue).sort((a, b) => VENUE_ORDER.indexOf(a) - VENUE_ORDER.indexOf(b));
  return { price: round(price), venues };
}
