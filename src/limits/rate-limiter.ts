/**
 * Per-key rate limits as a GCRA token bucket (brandur.org/rate-limiting): one "theoretical arrival
 * time" per key, no refill process, exact remaining/reset values. A key may make `burst` requests
 * at once and then `perSecond` more each second.
 */
export interface RateLimitPolicy {
  perSecond: number;
  burst: number;
}

/** The slowest refill a bucket may have (one request per 1,000 s); anything lower is clamped. */
export const MIN_PER_SECOND = 0.001;

export interface RateLimitDecision {
  allowed: boolean;
  /** The bucket size (RateLimit-Limit). */
  limit: number;
  /** Requests that could still be made right now (RateLimit-Remaining). */
  remaining: number;
  /** Milliseconds until the bucket is full again (RateLimit-Reset). */
  resetMs: number;
  /** When refused: milliseconds until one request is allowed (Retry-After). */
  retryAfterMs: number;
}

export interface RateLimiter {
  /** Synchronous when the buckets are in process (the hot path needs no promise for it). */
  take(key: string, policy: RateLimitPolicy, nowMs: number): RateLimitDecision | Promise<RateLimitDecision>;
  close(): Promise<void>;
}

/** One GCRA step: the decision, and the arrival time to store when allowed. */
export function gcraStep(
  storedTat: number | undefined,
  policy: RateLimitPolicy,
  nowMs: number,
): { decision: RateLimitDecision; newTat: number | null } {
  const interval = 1000 / Math.max(policy.perSecond, MIN_PER_SECOND);
  const tat = Math.max(storedTat ?? nowMs, nowMs);
  const newTat = tat + interval;
  const allowAt = newTat - policy.burst * interval;
  if (nowMs < allowAt) {
    return {
      decision: {
        allowed: false,
        limit: policy.burst,
        remaining: 0,
        resetMs: Math.ceil(tat - nowMs),
        retryAfterMs: Math.ceil(allowAt - nowMs),
      },
      newTat: null,
    };
  }
  return {
    decision: {
      allowed: true,
      limit: policy.burst,
      remaining: Math.floor((nowMs - allowAt) / interval + 1e-9),
      resetMs: Math.ceil(newTat - nowMs),
      retryAfterMs: 0,
    },
    newTat,
  };
}

const PRUNE_AT = 100_000;

/** In-process buckets: exact for one instance; each instance has its own. */
export class LocalRateLimiter implements RateLimiter {
  private readonly tats = new Map<string, number>();

  take(key: string, policy: RateLimitPolicy, nowMs: number): RateLimitDecision {
    return this.takeSync(key, policy, nowMs);
  }

  takeSync(key: string, policy: RateLimitPolicy, nowMs: number): RateLimitDecision {
    const { decision, newTat } = gcraStep(this.tats.get(key), policy, nowMs);
    if (newTat !== null) {
      if (this.tats.size >= PRUNE_AT) this.prune(nowMs);
      this.tats.set(key, newTat);
    }
    return decision;
  }

  /** A bucket whose arrival time has passed is full: forgetting it changes nothing. */
  private prune(nowMs: number): void {
    for (const [key, tat] of this.tats) if (tat <= nowMs) this.tats.delete(key);
  }

  async close(): Promise<void> {}
}
