/**
 * The outcome-probability rule of prediction markets (docs/markets.md), in one place: GET /markets/{id},
 * the market list and the market stream (docs/streams.md#markets) all compute it here. A pure function
 * on the ground floor, so that `markets/` and `streams/` share it without importing each other.
 */

/** Rounded to 6 decimals, as probabilities (and USD values derived from them) are presented. */
export const round6 = (n: number) => Math.round(n * 1e6) / 1e6;

/** What the rule reads of an outcome: basis points (0–10,000), null when there is none. */
export interface OutcomeQuotes {
  bestBid: number | null;
  bestAsk: number | null;
  lastPrice: number | null;
}

/**
 * Each outcome's probability: the mid of its best bid and best ask when it has both, else its
 * last trade price, else 1 ÷ outcomes; then scaled so the outcomes sum to 1 (equal shares when every
 * raw value is 0). Rounded to 6 decimals.
 */
export function outcomeProbabilities(outcomes: readonly OutcomeQuotes[]): number[] {
  const n = outcomes.length;
  const raw = outcomes.map((o) => {
    if (o.bestBid !== null && o.bestAsk !== null) return (o.bestBid + o.bestAsk) / 2 / 10_000;
    if (o.lastPrice !== null) return o.lastPrice / 10_000;
    return 1 / n;
  });
  const sum = raw.reduce((a, b) => a + b, 0);
  return raw.map((r) => round6(sum > 0 ? r / sum : 1 / n));
}
