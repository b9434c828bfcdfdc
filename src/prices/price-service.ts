import type { Clock } from '../lib/clock.js';
import type { PriceConfig } from './config.js';
import { QuoteSource } from './quote-source.js';
import { createSandboxVenues } from './sandbox/venues.js';
import { PriceService } from './service.js';
import type { PriceVenue } from './types.js';

/** Wires the price service: live venues for live accounts, the simulated ones for sandbox. */
export function createPriceService(p: PriceConfig, clock: Clock, liveVenues: PriceVenue[]): PriceService {
  const options = {
    ttlMs: p.cacheTtlMs,
    errorTtlMs: p.errorCacheTtlMs,
    breakerFailures: p.breakerFailures,
    breakerCooldownMs: p.breakerCooldownMs,
    unknownMintTtlMs: p.unknownMintTtlMs,
    mintLookupsPerMinute: p.mintLookupsPerMinute,
    mintLookupsPerAccount: p.mintLookupsPerAccount,
  };
  return new PriceService(
    {
      live: new QuoteSource(liveVenues, options, clock),
      sandbox: new QuoteSource(createSandboxVenues(clock), options, clock),
    },
    { maxAgeMs: p.maxAgeMs, outlierTolerance: p.outlierTolerance, minSources: p.minSources },
    clock,
  );
}
