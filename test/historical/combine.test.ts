import { describe, expect, it } from 'vitest';
import { type BucketCandle, combineBucket } from '../../src/historical/combine.js';

const TOLERANCE = 0.02;

describe('combining one bucket', () => {
  it('is the volume-weighted close over venues with volume, named in a fixed order', () => {
    const candles: BucketCandle[] = [
      { venue: 'okx', close: 101, volumeUsd: 3000 },
      { venue: 'binance', close: 100, volumeUsd: 1000 },
      { venue: 'coinbase', close: 100.5, volumeUsd: 2000 },
    ];
    // (100×1000 + 100.5×2000 + 101×3000) / 6000 = 604000 / 6000
    expect(combineBucket(candles, TOLERANCE)).toEqual({
      price: 100.666666667,
      venues: ['binance', 'coinbase', 'okx'],
    });
  });

  it('leaves out venues without volume while any venue has some', () => {
    const candles: BucketCandle[] = [
      { venue: 'coingecko', close: 99, volumeUsd: null },
      { venue: 'kraken', close: 100, volumeUsd: 0 },
      { venue: 'binance', close: 100.2, volumeUsd: 500 },
      { venue: 'okx', close: 100.4, volumeUsd: 1500 },
    ];
    // (100.2×500 + 100.4×1500) / 2000 = 200700 / 2000
    expect(combineBucket(candles, TOLERANCE)).toEqual({ price: 100.35, venues: ['binance', 'okx'] });
  });

  it('falls back to the plain mean when no venue reports volume (CoinGecko alone)', () => {
    expect(combineBucket([{ venue: 'coingecko', close: 150.25, volumeUsd: null }], TOLERANCE)).toEqual({
      price: 150.25,
      venues: ['coingecko'],
    });
    const noVolume: BucketCandle[] = [
      { venue: 'coingecko', close: 150, volumeUsd: null },
      { venue: 'kraken', close: 151, volumeUsd: 0 },
    ];
    expect(combineBucket(noVolume, TOLERANCE)).toEqual({ price: 150.5, venues: ['kraken', 'coingecko'] });
  });

  it('drops a close further than the tolerance from the median of three or more', () => {
    const candles: BucketCandle[] = [
      { venue: 'sandbox-gamma', close: 106, volumeUsd: 2000 },
      { venue: 'sandbox-alpha', close: 100, volumeUsd: 5000 },
      { venue: 'sandbox-beta', close: 100.1, volumeUsd: 3000 },
    ];
    // Median 100.1; 106 is 5.9% off. (100×5000 + 100.1×3000) / 8000 = 800300 / 8000
    expect(combineBucket(candles, TOLERANCE)).toEqual({
      price: 100.0375,
      venues: ['sandbox-alpha', 'sandbox-beta'],
    });
    // The median includes venues without volume: CoinGecko helps outvote a bad print.
    const withReference: BucketCandle[] = [
      { venue: 'binance', close: 90, volumeUsd: 10_000 },
      { venue: 'okx', close: 100, volumeUsd: 1000 },
      { venue: 'coingecko', close: 100.1, volumeUsd: null },
    ];
    expect(combineBucket(withReference, TOLERANCE)).toEqual({ price: 100, venues: ['okx'] });
  });

  it('with two candles there is no median to judge by: both are weighted', () => {
    const candles: BucketCandle[] = [
      { venue: 'binance', close: 100, volumeUsd: 1000 },
      { venue: 'okx', close: 110, volumeUsd: 1000 },
    ];
    expect(combineBucket(candles, TOLERANCE)).toEqual({ price: 105, venues: ['binance', 'okx'] });
  });

  it('an even split with no majority drops nobody', () => {
    const candles: BucketCandle[] = [
      { venue: 'binance', close: 100, volumeUsd: 1000 },
      { venue: 'coinbase', close: 100, volumeUsd: 1000 },
      { venue: 'kraken', close: 110, volumeUsd: 1000 },
      { venue: 'okx', close: 110, volumeUsd: 1000 },
    ];
    expect(combineBucket(candles, TOLERANCE)).toEqual({
      price: 105,
      venues: ['binance', 'coinbase', 'kraken', 'okx'],
    });
  });

  it('a bucket no venue covers has no price', () => {
    expect(combineBucket([], TOLERANCE)).toBeNull();
  });
});
