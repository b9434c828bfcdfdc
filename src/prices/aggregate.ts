import type { VenueName } from './types.js';

/** A quote as the aggregation sees it: the receipt time stands in when a venue gives no timestamp. */
export interface Observation {
  venue: VenueName;
  role: 'market' | 'reference';
  price: number;
  volume24hUsd: number | null;
  timestamp: Date;
}

export interface AggregationRules {
  /** A quote older than this is stale. */
  maxAgeMs: number;
  /** Largest relative distance from the median (and spread among the sources kept) that is normal. */
  outlierTolerance: number;
  /** Sources needed for a valid price. */
  minSources: number;
}

export type SourceStatus = 'used' | 'stale' | 'no_volume' | 'outlier' | 'reference' | 'out_of_range';

export interface SourceReport {
  name: VenueName;
  price: number;
  /** 24h volume in USD; 0 when the venue reports none (then `status` says why it was not used). */
  volume24h: number;
  timestamp: string;
  used: boolean;
  status: SourceStatus;
  /** Relative distance from the median of the fresh quotes, when there were enough to take one. */
  deviation?: number;
}

export interface Aggregate {
  vwapPrice: number;
  sources: SourceReport[];
  sourceCount: number;
  isValid: boolean;
  /** (max − min) / VWAP over the sources used; 0 with fewer than two. */
  spread: number;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  // Halves first: the sum of two prices near the largest double would be Infinity.
  return sorted.length % 2
    ? (sorted[mid] as number)
    : (sorted[mid - 1] as number) / 2 + (sorted[mid] as number) / 2;
}

/**
 * Σ(price × volume) / Σ(volume), with every volume first divided by the largest: the weights are then
 * at most 1 and their sum at most the number of sources, and the mean of prices they weight is never
 * beyond the largest price, so no partial sum overflows however large the volumes.
 */
function weightedMean(sources: { price: number; volume24h: number }[]): number {
  const largest = Math.max(...sources.map((s) => s.volume24h));
  const weights = sources.map((s) => s.volume24h / largest);
  const total = weights.reduce((sum, w) => sum + w, 0);
  return sources.reduce((sum, s, i) => sum + s.price * ((weights[i] as number) / total), 0);
}

const round = (n: number, digits: number) => Number(n.toPrecision(digits));

/** Outliers need a median that one bad quote cannot drag: at least three fresh prices. */
const MIN_FOR_MEDIAN = 3;

/**
 * VWAP = Σ(price × volume) / Σ(volume) over the market quotes kept. A quote is dropped when stale,
 * when it has no volume, or when it is further than the tolerance from the median of all fresh
 * quotes (reference venues such as Pyth count toward that median but are never weighted), or
 * when its price × volume is beyond the range of a double (a venue's absurd figure, which would make
 * the VWAP Infinity: docs/prices.md#algorithm). The price is valid when at least `minSources` quotes are kept and their spread is within tolerance.
 * With no quote kept, the price is the median of the fresh quotes (or of all) and is not valid.
 */
export function aggregate(observations: Observation[], now: Date, rules: AggregationRules): Aggregate {
  if (observations.length === 0) throw new Error('aggregate needs at least one observation');
  const isFresh = (o: Observation) => now.getTime() - o.timestamp.getTime() <= rules.maxAgeMs;
  const fresh = observations.filter(isFresh);
  const center = fresh.length >= MIN_FOR_MEDIAN ? median(fresh.map((o) => o.price)) : null;

  const reports: SourceReport[] = observations.map((o) => {
    const deviation = center === null ? undefined : Math.abs(o.price - center) / center;
    let status: SourceStatus;
    if (!isFresh(o)) status = 'stale';
    else if (deviation !== undefined && deviation > rules.outlierTolerance) status = 'outlier';
    else if (o.role === 'reference') status = 'reference';
    else if (o.volume24hUsd === null || !(o.volume24hUsd > 0)) status = 'no_volume';
    else if (!Number.isFinite(o.price * o.volume24hUsd)) status = 'out_of_range';
    else status = 'used';
    return {
      name: o.venue,
      price: o.price,
      volume24h: o.volume24hUsd !== null && o.volume24hUsd > 0 ? o.volume24hUsd : 0,
      timestamp: o.timestamp.toISOString(),
      used: status === 'used',
      status,
      ...(deviation === undefined ? {} : { deviation: round(deviation, 6) }),
    };
  });

  const used = reports.filter((r) => r.used);
  let vwap: number;
  if (used.length > 0) {
    vwap = weightedMean(used);
  } else {
    const candidates = reports.filter(
      (r) => r.status !== 'outlier' && r.status !== 'stale' && r.status !== 'out_of_range',
    );
    vwap = median((candidates.length > 0 ? candidates : reports).map((r) => r.price));
  }
  const prices = used.map((r) => r.price);
  const spread = used.length >= 2 ? (Math.max(...prices) - Math.min(...prices)) / vwap : 0;
  return {
    vwapPrice: round(vwap, 12),
    sources: reports,
    sourceCount: used.length,
    isValid: used.length >= rules.minSources && spread <= rules.outlierTolerance,
    spread: round(spread, 6),
  };
}
