import type { Clock } from '../lib/clock.js';
import { metrics } from '../metrics/metrics.js';
import { LookupBudget } from './lookup-budget.js';
import type { PriceTarget } from './tokens.js';
import { type PriceVenue, VenueError, type VenueFailure, type VenueName, type VenueQuote } from './types.js';

export type VenueOutcome =
  | { venue: VenueName; role: PriceVenue['role']; kind: 'quote'; quote: VenueQuote; receivedAt: Date }
  | { venue: VenueName; role: PriceVenue['role']; kind: 'not_listed' }
  | { venue: VenueName; role: PriceVenue['role']; kind: 'failed'; failure: VenueFailure; message: string }
  | {
      venue: VenueName;
      role: PriceVenue['role'];
      kind: 'skipped';
      /** circuit_open: the venue keeps failing; rate_limited: its budget for mints outside the registry is spent. */
      reason: 'circuit_open' | 'rate_limited';
      retryAt: Date;
    };

export interface QuoteSourceOptions {
  /** How long a quote (or a "not listed") is reused. */
  ttlMs: number;
  /** How long a failure is reused before the venue is asked again. */
  errorTtlMs: number;
  /** Consecutive failures after which a venue is skipped... */
  breakerFailures: number;
  /** ...for this long (or for as long as a rate limit's Retry-After asks). */
  breakerCooldownMs: number;
  /**
   * Mints outside the registry: how long a venue's "not listed" is remembered, and the longest a
   * failing mint's back-off grows to...
   */
  unknownMintTtlMs: number;
  /** ...and how many calls about them each venue may receive in any minute... */
  mintLookupsPerMinute: number;
  /** ...of which at most this many for one account. */
  mintLookupsPerAccount: number;
}

/** Entries kept at most: any well-formed mint is a new key, so the cache must not grow forever. */
const MAX_CACHED = 10_000;

interface CacheEntry {
  outcome: VenueOutcome;
  expiresAt: number;
  /** Consecutive failures of this venue for this token: a failing mint outside the registry backs off. */
  failures: number;
}

interface Breaker {
  failures: number;
  openUntil: number;
}

/**
 * Asks a set of venues about a token, all in parallel, each with its own timeout and no shared
 * failure. Answers are cached briefly and coalesced: however many requests want SOL at once, each
 * venue is asked at most once per refresh. A venue that keeps failing is skipped for a while (its
 * circuit is open) and the outcome says so.
 *
 * Mints outside the registry are whatever a client makes up, so what they cost the venues is bounded
 * (docs/prices.md#mints-outside-the-registry): a "not listed" is remembered for long, a failure backs
 * off per venue and mint, their calls share a budget per venue that the registry's tokens never wait
 * for (one account at most its share of it), and their failures never open a venue's circuit for everyone else.
 */
export class QuoteSource {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inFlight = new Map<string, Promise<VenueOutcome>>();
  private readonly breakers = new Map<VenueName, Breaker>();
  private readonly mintBudget: LookupBudget;

  constructor(
    readonly venues: readonly PriceVenue[],
    private readonly options: QuoteSourceOptions,
    private readonly clock: Clock,
  ) {
    this.mintBudget = new LookupBudget(options.mintLookupsPerMinute, options.mintLookupsPerAccount);
  }

  /**
   * One outcome per venue that can price the target; empty when none can. `accountId`: the account
   * asking, whose share of a venue's budget for mints outside the registry a call for it takes.
   */
  outcomes(target: PriceTarget, accountId?: string): VenueOutcome[] | Promise<VenueOutcome[]> {
    const venues = this.venues.filter((v) => v.canPrice(target));
    // The common case on a busy token: every venue's answer is cached; no promise needed.
    const now = this.clock.now().getTime();
    const cached: VenueOutcome[] = [];
    for (const venue of venues) {
      const entry = this.cache.get(`${venue.name}\u0000${target.key}`);
      if (!entry || entry.expiresAt <= now) break;
      cached.push(entry.outcome);
    }
    if (cached.length === venues.length) return cached;
    return Promise.all(venues.map((v) => this.outcome(v, target, accountId)));
  }

  private outcome(
    venue: PriceVenue,
    target: PriceTarget,
    accountId: string | undefined,
  ): Promise<VenueOutcome> {
    const key = `${venue.name}\u0000${target.key}`;
    const now = this.clock.now().getTime();
    const cached = this.cache.get(key);
    if (cached && cached.expiresAt > now) return Promise.resolve(cached.outcome);
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const breaker = this.breakers.get(venue.name);
    if (breaker && breaker.openUntil > now) {
      return Promise.resolve({
        venue: venue.name,
        role: venue.role,
        kind: 'skipped',
        reason: 'circuit_open',
        retryAt: new Date(breaker.openUntil),
      });
    }
    const outsideRegistry = target.token === null;
    if (outsideRegistry) {
      const retryAt = this.mintBudget.take(venue.name, now, accountId);
      if (retryAt !== null) {
        return Promise.resolve({
          venue: venue.name,
          role: venue.role,
          kind: 'skipped',
          reason: 'rate_limited',
          retryAt: new Date(retryAt),
        });
      }
    }
    const call = this.ask(venue, target).then((outcome) => {
      this.inFlight.delete(key);
      const failures = outcome.kind === 'failed' ? (cached?.failures ?? 0) + 1 : 0;
      // A mint outside the registry failing says little about the venue, and a client chooses it.
      if (!outsideRegistry) this.record(venue.name, outcome);
      const ttl = outsideRegistry ? this.mintTtl(outcome, failures) : this.ttl(outcome);
      if (this.cache.size >= MAX_CACHED) this.prune();
      this.cache.set(key, { outcome, expiresAt: this.clock.now().getTime() + ttl, failures });
      return outcome;
    });
    this.inFlight.set(key, call);
    return call;
  }

  private ttl(outcome: VenueOutcome): number {
    return outcome.kind === 'failed' ? this.options.errorTtlMs : this.options.ttlMs;
  }

  /**
   * A mint outside the registry: a "not listed" stays for `unknownMintTtlMs` (a mint no venue knows
   * is not asked about again for a while); the n-th failure in a row for 2^(n-1) times the error TTL,
   * at most as long.
   */
  private mintTtl(outcome: VenueOutcome, failures: number): number {
    const { errorTtlMs, unknownMintTtlMs } = this.options;
    if (outcome.kind === 'not_listed') return unknownMintTtlMs;
    if (outcome.kind !== 'failed') return this.options.ttlMs;
    return Math.min(errorTtlMs * 2 ** Math.min(failures - 1, 30), unknownMintTtlMs);
  }

  private async ask(venue: PriceVenue, target: PriceTarget): Promise<VenueOutcome> {
    try {
      // Each adapter applies its own timeout; this signal only exists to satisfy the port.
      const quote = await venue.fetchQuote(target, new AbortController().signal);
      metrics.venueCalled(venue.name, 'quote', quote === null ? 'not_listed' : 'ok');
      if (quote === null) return { venue: venue.name, role: venue.role, kind: 'not_listed' };
      return { venue: venue.name, role: venue.role, kind: 'quote', quote, receivedAt: this.clock.now() };
    } catch (err) {
      const failure: VenueFailure = err instanceof VenueError ? err.kind : 'upstream_error';
      metrics.venueCalled(venue.name, 'quote', failure);
      const message = err instanceof VenueError ? err.message : `${venue.name}: unexpected failure`;
      const outcome: VenueOutcome = { venue: venue.name, role: venue.role, kind: 'failed', failure, message };
      if (err instanceof VenueError && err.kind === 'rate_limited' && err.retryAfterMs) {
        this.trip(venue.name, err.retryAfterMs);
      }
      return outcome;
    }
  }

  private record(venue: VenueName, outcome: VenueOutcome): void {
    const breaker = this.breakers.get(venue) ?? { failures: 0, openUntil: 0 };
    if (outcome.kind === 'failed') {
      breaker.failures += 1;
      if (breaker.failures >= this.options.breakerFailures) {
        breaker.openUntil = Math.max(
          breaker.openUntil,
          this.clock.now().getTime() + this.options.breakerCooldownMs,
        );
      }
    } else {
      breaker.failures = 0;
      breaker.openUntil = 0;
    }
    this.breakers.set(venue, breaker);
  }

  /** Drops expired entries, then the oldest ones if that was not enough. */
  private prune(): void {
    const now = this.clock.now().getTime();
    for (const [key, entry] of this.cache) if (entry.expiresAt <= now) this.cache.delete(key);
    for (const key of this.cache.keys()) {
      if (this.cache.size < MAX_CACHED * 0.9) break;
      this.cache.delete(key);
    }
  }

  get cachedEntries(): number {
    return this.cache.size;
  }

  private trip(venue: VenueName, forMs: number): void {
    const breaker = this.breakers.get(venue) ?? { failures: 0, openUntil: 0 };
    breaker.openUntil = Math.max(breaker.openUntil, this.clock.now().getTime() + forMs);
    this.breakers.set(venue, breaker);
  }
}
