import { describe, expect, it } from 'vitest';
import { type AggregationRules, aggregate, type Observation } from '../../src/prices/aggregate.js';
import type { VenueName } from '../../src/prices/types.js';

const now = new Date('2026-11-21T12:00:00Z');
const rules: AggregationRules = { maxAgeMs: 60_000, outlierTolerance: 0.02, minSources: 2 };

function obs(
  venue: VenueName,
  price: number,
  volume: number | null,
  ageMs = 0,
  role: Observation['role'] = 'market',
) {
  return { venue, role, price, volume24hUsd: volume, timestamp: new Date(now.getTime() - ageMs) };
}

describe('VWAP aggregation', () => {
  it('weights by volume: (100×1000 + 101×3000) / 4000 = 100.75', () => {
    const result = aggregate([obs('binance', 100, 1000), obs('kraken', 101, 3000)], now, rules);
    expect(result.vwapPrice).toBe(100.75);
    expect(result.sourceCount).toBe(2);
    expect(result.isValid).toBe(true);
    expect(result.spread).toBeCloseTo(1 / 100.75, 6);
    expect(result.sources.map((s) => [s.name, s.used, s.status])).toEqual([
      ['binance', true, 'used'],
      ['kraken', true, 'used'],
    ]);
  });

  it('drops an outlier: median of 100, 101, 110 is 101; 110 is 8.9% off', () => {
    const result = aggregate(
      [obs('binance', 100, 1000), obs('kraken', 101, 1000), obs('okx', 110, 5000)],
      now,
      rules,
    );
    expect(result.vwapPrice).toBe(100.5);
    expect(result.sourceCount).toBe(2);
    expect(result.isValid).toBe(true);
    const okx = result.sources.find((s) => s.name === 'okx');
    expect(okx).toMatchObject({ used: false, status: 'outlier' });
    expect(okx?.deviation).toBeCloseTo(9 / 101, 6);
  });

  it('drops stale quotes, by the quote’s own timestamp', () => {
    const result = aggregate(
      [obs('binance', 100, 1000), obs('kraken', 102, 1000), obs('okx', 150, 1000, 61_000)],
      now,
      rules,
    );
    expect(result.sources.find((s) => s.name === 'okx')).toMatchObject({ used: false, status: 'stale' });
    expect(result.vwapPrice).toBe(101);
  });

  it('drops sources without volume; reference sources steer the median but carry no weight', () => {
    const result = aggregate(
      [
        obs('binance', 100, 1000),
        obs('coinbase', 100.4, 0),
        obs('pyth', 100.2, null, 0, 'reference'),
        obs('kraken', 100.6, 3000),
      ],
      now,
      rules,
    );
    expect(result.sources.map((s) => s.status)).toEqual(['used', 'no_volume', 'reference', 'used']);
    expect(result.sources.find((s) => s.name === 'coinbase')?.volume24h).toBe(0);
    expect(result.vwapPrice).toBe(100.45);
  });

  it('is invalid with fewer than two sources kept', () => {
    const one = aggregate([obs('binance', 100, 1000), obs('kraken', 100, 1000, 120_000)], now, rules);
    expect(one).toMatchObject({ vwapPrice: 100, sourceCount: 1, isValid: false });
  });

  it('is invalid when two sources disagree by more than the tolerance (too few to call an outlier)', () => {
    const result = aggregate([obs('binance', 100, 1000), obs('kraken', 105, 1000)], now, rules);
    expect(result).toMatchObject({ vwapPrice: 102.5, sourceCount: 2, isValid: false });
    expect(result.sources.every((s) => s.used)).toBe(true);
  });

  it('with nothing usable, reports the median of the fresh prices as not valid', () => {
    const result = aggregate(
      [obs('jupiter', 99, null, 0, 'reference'), obs('pyth', 101, null, 0, 'reference')],
      now,
      rules,
    );
    expect(result).toMatchObject({ vwapPrice: 100, sourceCount: 0, isValid: false });
  });

  it('volumes whose sum is beyond a double still weight a finite VWAP (1e308 twice at 1 and 1.01: the plain sums are Infinity)', () => {
    const result = aggregate([obs('binance', 1, 1e308), obs('kraken', 1.01, 1e308)], now, rules);
    expect(result).toMatchObject({ vwapPrice: 1.005, sourceCount: 2, isValid: true });
  });
});
