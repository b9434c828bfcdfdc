import type { Candle } from '../types.js';

/**
 * The candles a venue returned for [start, end): those opening inside the range, one per bucket
 * (overlapping pages repeat rows), oldest first — whatever order and paging the venue uses.
 */
export class CandleRange {
  private readonly byOpenTime = new Map<number, Candle>();

  constructor(
    private readonly startMs: number,
    private readonly endMs: number,
  ) {}

  /** Keeps the candle if it opens in the range; returns its open time either way (for paging). */
  add(candle: Candle): number {
    const openMs = candle.openTime.getTime();
    if (openMs >= this.startMs && openMs < this.endMs) this.byOpenTime.set(openMs, candle);
    return openMs;
  }

  oldestFirst(): Candle[] {
    return [...this.byOpenTime.values()].sort((a, b) => a.openTime.getTime() - b.openTime.getTime());
  }
}
