import { AppError } from '../errors.js';
import { formatCidr, formatIp, type IpAddress } from '../lib/ip.js';
import type { RateLimiter, RateLimitPolicy } from './rate-limiter.js';

/** What the limiter has done since the process started, for metrics to read (never reset). */
export interface AuthFailureCounts {
  /** Failed authentications (401 answers), the refused ones included. */
  failures: number;
  /** Requests answered 429 because their address had failed too often. */
  refused: number;
}

/** Addresses remembered as over the limit; past this many, the expired ones are dropped. */
const MAX_BLOCKED = 100_000;
const IPV6_PREFIX = 64;

/**
 * The address a failure is counted against: IPv4 as is, IPv6 by its /64 (one subscriber's
 * allocation, which a client can roam within at will), "unknown" when no address could be read.
 */
export function failureAddress(ip: IpAddress | null): string {
  if (ip === null) return 'unknown';
  if (ip.version === 4) return formatIp(ip);
  const hostBits = BigInt(128 - IPV6_PREFIX);
  return formatCidr({ version: 6, base: (ip.value >> hostBits) << hostBits, prefix: IPV6_PREFIX });
}

/**
 * A token bucket of failed authentications per client address. Every failure takes a token (from
 * the shared Redis bucket when one is configured); a failure that finds the bucket empty is
 * answered 429 instead of 401, and the address is then refused before any key lookup until a token
 * is back. That refusal is remembered per instance, so an instance stops looking keys up for an
 * address at the latest on its own first refused failure. Successful requests take nothing.
 */
export class AuthFailureLimiter {
  readonly counts: AuthFailureCounts = { failures: 0, refused: 0 };
  private readonly blockedUntil = new Map<string, number>();

  constructor(
    private readonly limiter: RateLimiter,
    private readonly policy: RateLimitPolicy,
  ) {}

  /**
   * Before authenticating: the 429 for an address over its limit, or null. Synchronous, and costs
   * nothing (not even reading the address) while no address is over.
   */
  refusal(addressOf: () => string, nowMs: number): AppError | null {
    if (this.blockedUntil.size === 0) return null;
    const address = addressOf();
    const until = this.blockedUntil.get(address);
    if (until === undefined) return null;
    if (until <= nowMs) {
      this.blockedUntil.delete(address);
      return null;
    }
    this.counts.refused++;
    return this.error(until - nowMs);
  }

  /** After a failed authentication: counts it, and answers the 429 to send instead when it is one too many. */
  async recordFailure(address: string, nowMs: number): Promise<AppError | null> {
    this.counts.failures++;
    const taken = this.limiter.take(`auth-failures:${address}`, this.policy, nowMs);
    const decision = taken instanceof Promise ? await taken : taken;
    if (decision.allowed) return null;
    if (this.blockedUntil.size >= MAX_BLOCKED) {
      for (const [blocked, until] of this.blockedUntil) if (until <= nowMs) this.blockedUntil.delete(blocked);
    }
    this.blockedUntil.set(address, nowMs + decision.retryAfterMs);
    this.counts.refused++;
    return this.error(decision.retryAfterMs);
  }

  private error(retryAfterMs: number): AppError {
    const retryAfter = Math.max(1, Math.ceil(retryAfterMs / 1000));
    return new AppError(
      'RATE_LIMIT_EXCEEDED',
      `Too many failed authentications from this address; retry in ${retryAfter} s`,
      {
        headers: { 'retry-after': String(retryAfter) },
        details: { limit: this.policy.burst, retryAfterSeconds: retryAfter },
      },
    );
  }
}
