import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { QuoteSource } from '../../src/prices/quote-source.js';
import type { PriceTarget } from '../../src/prices/tokens.js';
import type { PriceVenue } from '../../src/prices/types.js';

describe('quote cache', () => {
  it('stays bounded however many distinct mints are asked about', async () => {
    const clock = new ManualClock();
    const venue: PriceVenue = {
      name: 'dexscreener',
      role: 'market',
      canPrice: () => true,
      fetchQuote: async () => null,
    };
    const source = new QuoteSource(
      [venue],
      {
        ttlMs: 60_000,
        errorTtlMs: 1000,
        breakerFailures: 5,
        breakerCooldownMs: 1000,
        unknownMintTtlMs: 60_000,
        // Every mint asked: what is bounded here is the cache, not the calls.
        mintLookupsPerMinute: 1_000_000,
        mintLookupsPerAccount: 1_000_000,
      },
      clock,
    );
    for (let i = 0; i < 12_000; i++) {
      const target: PriceTarget = { key: `mint-${i}`, token: null, mint: `mint-${i}` };
      await source.outcomes(target);
    }
    expect(source.cachedEntries).toBeLessThanOrEqual(10_000);
    expect(source.cachedEntries).toBeGreaterThan(8_000);
  });
});
