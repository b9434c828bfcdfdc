import type { AccountMode } from '../accounts/accounts.js';
import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { type Aggregate, type AggregationRules, aggregate, type Observation } from './aggregate.js';
import type { QuoteSource, VenueOutcome } from './quote-source.js';
import type { PriceTarget } from './tokens.js';
import type { VenueName } from './types.js';

/** A venue that gave no quote this time, and why. */
export interface UnavailableSource {
  name: VenueName;
  reason:
    | 'timeout'
    | 'network'
    | 'rate_limited'
    | 'geo_blocked'
    | 'http_error'
    | 'bad_response'
    | 'upstream_error'
    | 'circuit_open'
    | 'not_listed';
  retryAt?: string;
}

export interface PriceResult extends Aggregate {
  unavailableSources: UnavailableSource[];
}

function unavailable(outcome: VenueOutcome): UnavailableSource | null {
  switch (outcome.kind) {
    case 'quote':
      return null;
    case 'not_listed':
      return { name: outcome.venue, reason: 'not_listed' };
    case 'failed':
      return { name: outcome.venue, reason: outcome.failure };
    case 'skipped':
      return { name: outcome.venue, reason: 'circuit_open', retryAt: outcome.retryAt.toISOString() };
  }
}

/**
 * Prices tokens for an account: sandbox accounts always from the simulated venues, live accounts
 * never. Throws SYMBOL_NOT_FOUND when no venue lists the token, PRICE_UNAVAILABLE when venues that
 * might have priced it all failed.
 */
export class PriceService {
  constructor(
    private readonly sources: Record<AccountMode, QuoteSource>,
    readonly rules: AggregationRules,
    private readonly clock: Clock,
  ) {}

  async price(target: PriceTarget, mode: AccountMode, requested: string): Promise<PriceResult> {
    const outcomes = await this.sources[mode].outcomes(target);
    const observations: Observation[] = [];
    for (const o of outcomes) {
      if (o.kind !== 'quote') continue;
      observations.push({
        venue: o.venue,
        role: o.role,
        price: o.quote.price,
        volume24hUsd: o.quote.volume24hUsd,
        timestamp: o.quote.timestamp ?? o.receivedAt,
      });
    }
    const missing = outcomes.map(unavailable).filter((u): u is UnavailableSource => u !== null);
    if (observations.length === 0) {
      if (missing.every((m) => m.reason === 'not_listed')) {
        throw new AppError('SYMBOL_NOT_FOUND', `No price source lists ${requested}`, {
          extras: { symbol: requested },
        });
      }
      throw new AppError(
        'PRICE_UNAVAILABLE',
        `No price source could price ${requested} right now; retry shortly`,
        {
          details: { unavailableSources: missing },
        },
      );
    }
    return { ...aggregate(observations, this.clock.now(), this.rules), unavailableSources: missing };
  }
}
