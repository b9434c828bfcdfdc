import type { AccountMode } from '../accounts/index.js';
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
      return { name: outcome.venue, reason: outcome.reason, retryAt: outcome.retryAt.toISOString() };
  }
}

/** Aggregates reused while a token's quotes stay the same objects, for at most this long. */
const MEMO_MS = 1000;
const MEMO_MAX = 10_000;

/**
 * Prices tokens for an account: sandbox accounts always from the simulated venues, live accounts
 * never. Throws SYMBOL_NOT_FOUND when no venue lists the token, PRICE_UNAVAILABLE when venues that
 * might have priced it all failed.
 */
export class PriceService {
  /**
   * The last aggregate per (mode, token). Quotes come from a cache, so thousands of requests a
   * second see the very same quote objects: aggregating them once per second instead of once per
   * request is a measurable share of the hot path (docs/performance.md). The staleness verdicts can
   * lag by at most MEMO_MS.
   */
  private readonly memo = new Map<string, { outcomes: VenueOutcome[]; at: number; result: PriceResult }>();

  constructor(
    private readonly sources: Record<AccountMode, QuoteSource>,
    readonly rules: AggregationRules,
    private readonly clock: Clock,
  ) {}

  /**
   * `accountId`: the account the price is for, when one asked (a route, its scheduled check): what
   * it costs the venues for a mint outside the registry is taken from its share
   * (docs/prices.md#mints-outside-the-registry).
   */
  async price(
    target: PriceTarget,
    mode: AccountMode,
    requested: string,
    accountId?: string,
  ): Promise<PriceResult> {
    const pending = this.sources[mode].outcomes(target, accountId);
    const outcomes = pending instanceof Promise ? await pending : pending;
    const memoKey = `${mode}\u0000${target.key}`;
    const nowMs = this.clock.now().getTime();
    const memo = this.memo.get(memoKey);
    if (
      memo &&
      nowMs - memo.at >= 0 &&
      nowMs - memo.at < MEMO_MS &&
      memo.outcomes.length === outcomes.length &&
      memo.outcomes.every((o, i) => o === outcomes[i])
    ) {
      return memo.result;
    }
    const result = this.compute(outcomes, requested);
    if (this.memo.size >= MEMO_MAX) this.memo.clear();
    this.memo.set(memoKey, { outcomes, at: nowMs, result });
    return result;
  }

  private compute(outcomes: VenueOutcome[], requested: string): PriceResult {
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
