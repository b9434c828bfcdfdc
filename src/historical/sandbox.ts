import { type PriceTarget, SANDBOX_TOKENS, SANDBOX_VENUES, sandboxQuote } from '../prices/index.js';
import { type BucketRange, bucketOpens } from './buckets.js';
import type { BucketCandle } from './combine.js';

const DAY_MS = 86_400_000;

export interface SandboxBucket {
  openMs: number;
  closed: boolean;
  candles: BucketCandle[];
}

/** The sandbox symbol of a target, or null when the sandbox feed does not simulate it. */
export function sandboxSymbol(target: PriceTarget): string | null {
  const symbol = target.token?.symbol;
  return symbol !== undefined && symbol in SANDBOX_TOKENS ? symbol : null;
}

/**
 * Sandbox history, derived from the same pure feed as sandbox spot prices so the two agree: each
 * simulated venue's candle closes at its last quote inside the bucket (for the still-open bucket,
 * its quote now, which is exactly what GET /price sees at that moment), with the venue's 24h volume
 * scaled to the bucket's length. Deterministic: a function of (symbol, range, now).
 */
export function sandboxBuckets(symbol: string, range: BucketRange, nowMs: number): SandboxBucket[] {
  return bucketOpens(range).map((openMs) => {
    const endMs = openMs + range.stepMs;
    const closed = endMs <= nowMs;
    // A quote belongs to the 10-second tick holding its time; endMs itself opens the next bucket.
    const at = closed ? endMs - 1 : nowMs;
    const candles = SANDBOX_VENUES.map((venue) => {
      const quote = sandboxQuote(symbol, venue, at);
      return { venue, close: quote.price, volumeUsd: (quote.volume24hUsd * range.stepMs) / DAY_MS };
    });
    return { openMs, closed, candles };
  });
}
