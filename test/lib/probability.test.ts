import { describe, expect, it } from 'vitest';
import { outcomeProbabilities } from '../../src/lib/probability.js';
import { marketState } from '../../src/markets/log/market-state.js';

/**
 * The outcome-probability rule of docs/markets.md, in one place (src/lib/probability.ts): the mid of
 * the best bid and ask, else the last trade price, else 1 ÷ outcomes, scaled to sum to 1. The market
 * stream's state applies it as GET /markets/{id} does (test/streams/markets.test.ts compares the two
 * over HTTP, the book included).
 */
describe('outcomeProbabilities', () => {
  it('takes the mid of a two-sided book, else the last price, else an equal share, scaled to 1', () => {
    expect(
      outcomeProbabilities([
        { bestBid: 6000, bestAsk: 6400, lastPrice: 1000 },
        { bestBid: null, bestAsk: 3000, lastPrice: 3800 },
      ]),
    ).toEqual([0.62, 0.38]);
    expect(
      outcomeProbabilities([
        { bestBid: null, bestAsk: null, lastPrice: null },
        { bestBid: null, bestAsk: null, lastPrice: null },
        { bestBid: null, bestAsk: null, lastPrice: null },
      ]),
    ).toEqual([0.333333, 0.333333, 0.333333]);
    expect(
      outcomeProbabilities([
        { bestBid: null, bestAsk: null, lastPrice: 0 },
        { bestBid: null, bestAsk: null, lastPrice: 0 },
      ]),
    ).toEqual([0.5, 0.5]);
  });

  it('is what a market stream event states for each outcome', () => {
    const outcomes = [
      { index: 0, label: 'A', lastPrice: 5000, bestBid: 4000, bestAsk: 4200 },
      { index: 1, label: 'B', lastPrice: 2500, bestBid: null, bestAsk: 2600 },
      { index: 2, label: 'C', lastPrice: null, bestBid: null, bestAsk: null },
    ];
    const state = marketState({
      id: 'm',
      status: 'OPEN',
      winning_outcome_index: null,
      resolved_at: null,
      trades: 2,
      volume: '0',
      outcomes,
    });
    expect(state.outcomes.map((o) => o.probability)).toEqual(outcomeProbabilities(outcomes));
  });
});
