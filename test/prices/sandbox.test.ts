import { describe, expect, it } from 'vitest';
import { aggregate, type Observation } from '../../src/prices/aggregate.js';
import {
  isSandboxOutlierWindow,
  SANDBOX_TOKENS,
  sandboxMidPrice,
  sandboxQuote,
} from '../../src/prices/sandbox/feed.js';
import { SANDBOX_VENUES } from '../../src/prices/types.js';

const rules = { maxAgeMs: 120_000, outlierTolerance: 0.02, minSources: 2 };
const start = Date.parse('2026-11-01T00:00:00Z');

function observe(symbol: string, t: number): Observation[] {
  return SANDBOX_VENUES.map((venue) => {
    const q = sandboxQuote(symbol, venue, t);
    return { venue, role: 'market', price: q.price, volume24hUsd: q.volume24hUsd, timestamp: q.timestamp };
  });
}

describe('sandbox feed', () => {
  it('is deterministic for a given symbol and time, and moves over time', () => {
    const t = start + 123_456_789;
    expect(sandboxQuote('SOL', 'sandbox-alpha', t)).toEqual(sandboxQuote('SOL', 'sandbox-alpha', t + 1));
    expect(sandboxQuote('SOL', 'sandbox-alpha', t).price).not.toBe(
      sandboxQuote('SOL', 'sandbox-alpha', t + 3_600_000).price,
    );
  });

  it('has plausible prices and volumes for every supported symbol, at any time', () => {
    for (const [symbol, token] of Object.entries(SANDBOX_TOKENS)) {
      for (let h = 0; h < 24 * 14; h += 7) {
        const t = start + h * 3_600_000;
        const mid = sandboxMidPrice(symbol, t);
        // The waves add up to at most ±5.9% times the token's swing.
        expect(Math.abs(mid / token.price - 1)).toBeLessThanOrEqual(0.059 * token.swing);
        for (const venue of SANDBOX_VENUES) {
          const q = sandboxQuote(symbol, venue, t);
          expect(q.volume24hUsd).toBeGreaterThan(0);
          expect(t - q.timestamp.getTime()).toBeLessThan(10_000);
        }
      }
    }
  });

  it('keeps stablecoins within a cent of a dollar', () => {
    for (let h = 0; h < 500; h++) {
      for (const symbol of ['USDC', 'USDT']) {
        expect(Math.abs(sandboxQuote(symbol, 'sandbox-beta', start + h * 997_000).price - 1)).toBeLessThan(
          0.01,
        );
      }
    }
  });

  it('makes sandbox-gamma an outlier about one minute in ten, and aggregation drops it', () => {
    let windows = 0;
    let total = 0;
    for (let m = 0; m < 2000; m++) {
      const t = start + m * 60_000;
      total++;
      const result = aggregate(observe('SOL', t), new Date(t), rules);
      if (isSandboxOutlierWindow('SOL', t)) {
        windows++;
        expect(result.sources.find((s) => s.name === 'sandbox-gamma')?.status).toBe('outlier');
        expect(result.sourceCount).toBe(2);
      } else {
        expect(result.sourceCount).toBe(3);
      }
      expect(result.isValid).toBe(true);
    }
    expect(windows / total).toBeGreaterThan(0.06);
    expect(windows / total).toBeLessThan(0.14);
  });
});
