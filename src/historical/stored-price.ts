import { type Context, queryable } from '../context.js';
import {
  CANDLE_INTERVALS,
  type CandleInterval,
  INTERVAL_MS,
  readToken,
  type VenueName,
} from '../prices/index.js';
import { bucketOpen } from './buckets.js';
import { type BucketCandle, combineBucket } from './combine.js';
import * as sql from './sql.js';

/** How a stored bucket is combined and judged: the spot price's rules (PRICE_OUTLIER_TOLERANCE, PRICE_MIN_SOURCES). */
export interface StoredPriceRules {
  outlierTolerance: number;
  minSources: number;
}

/**
 * What Sibyl stored of a token at an instant (the AI room's `sibyl_price` tool:
 * docs/ai.md#sibyls-tools): the candle of the finest interval it stored that contains `at`,
 * combined over the venues as a series' point is (combine.ts), or why there is none.
 */
export type StoredPriceAt =
  | { kind: 'invalid_symbol'; reason: string }
  | { kind: 'unknown_symbol'; symbol: string }
  | { kind: 'no_data'; symbol: string }
  | {
      kind: 'candle';
      symbol: string;
      candle: {
        interval: CandleInterval;
        openTime: string;
        closeTime: string;
        price: number;
        sources: string[];
        valid: boolean;
      };
    };

interface Row {
  bucket_interval: CandleInterval;
  venue: VenueName;
  close: number;
  volume_usd: number | null;
}

/**
 * Reads only what is stored (closed buckets a venue answered: `service.ts`), never a venue: a model's
 * question costs no venue call and gives the same answer every time. A price is valid when at least
 * `minSources` venues make it up and their closes lie within `outlierTolerance` of it, as a spot
 * price is (docs/prices.md#algorithm).
 */
export async function storedPriceAt(
  ctx: Context,
  symbol: string,
  at: Date,
  rules: StoredPriceRules,
): Promise<StoredPriceAt> {
  const token = readToken(symbol);
  if ('invalid' in token) return { kind: 'invalid_symbol', reason: token.invalid };
  if (!token.target) return { kind: 'unknown_symbol', symbol: token.symbol };
  const ms = at.getTime();
  const opens = CANDLE_INTERVALS.map((interval) => bucketOpen(ms, interval));
  const rows = await queryable(ctx).query<Row>(sql.SELECT_CANDLES_AT, [
    token.target.key,
    CANDLE_INTERVALS,
    opens,
  ]);
  // The finest interval first: the narrowest bucket says the most about the instant.
  for (const [i, interval] of CANDLE_INTERVALS.entries()) {
    const candles: BucketCandle[] = rows
      .filter((r) => r.bucket_interval === interval)
      .map((r) => ({ venue: r.venue, close: r.close, volumeUsd: r.volume_usd }));
    const combined = combineBucket(candles, rules.outlierTolerance);
    if (!combined) continue;
    const closes = candles.filter((c) => combined.venues.includes(c.venue)).map((c) => c.close);
    const spread = (Math.max(...closes) - Math.min(...closes)) / combined.price;
    const openMs = opens[i] as number;
    return {
      kind: 'candle',
      symbol: token.symbol,
      candle: {
        interval,
        openTime: new Date(openMs).toISOString(),
        closeTime: new Date(openMs + INTERVAL_MS[interval]).toISOString(),
        price: combined.price,
        sources: combined.venues,
        valid: combined.venues.length >= rules.minSources && spread <= rules.outlierTolerance,
      },
    };
  }
  return { kind: 'no_data', symbol: token.symbol };
}
