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

/**
 * What a bucket stores: its debt — the requests it holds, not yet paid back by the refill — as of
 * `at` (ms). Kept in requests, never in time: GCRA's usual state, the theoretical arrival time, is
 * the debt multiplied by the interval of the policy that wrote it, so after the policy changed (a
 * higher rate, a key's new limit, SIGN_IN_LIMIT_* at a restart) the old interval went on counting
 * until that time had passed — a raised limit refused requests for as long as the old one would
 * have. In requests, every step measures the debt against the policy it is given: a changed limit
 * applies at the next request.
 */
export interface BucketState {
  debt: number;
  at: number;
}

/**
 * One GCRA step (the same decisions as the virtual-scheduling form, for an unchanged policy): the
 * debt drains at `perSecond` since `at`; a request is admitted when it fits beside what is left,
 * `debt + 1 <= burst`. Returns the decision and, when admitted, the state to store.
 */
export function gcraStep(
  stored: BucketState | undefined,
  policy: RateLimitPolicy,
  nowMs: number,
): { decision: RateLimitDecision; state: BucketState | null } {
  const interval = 1000 / Math.max(policy.perSecond, MIN_PER_SECOND);
  const debt = stored ? Math.max(0, stored.debt - Math.max(0, nowMs - stored.at) / interval) : 0;
  // 1e-9: debts are sums of fractions of an interval; their rounding must not refuse a request.
  if (debt + 1 > policy.burst + 1e-9) {
    return {
      decision: {
        allowed: false,
        limit: policy.burst,
        remaining: 0,
        resetMs: Math.ceil(debt * interval),
        retryAfterMs: Math.ceil((debt + 1 - policy.burst) * interval),
      },
      state: null,
    };
  }
  return {
    decision: {
      allowed: true,
      limit: policy.burst,
      remaining: Math.floor(policy.burst - debt - 1 + 1e-9),
      resetMs: Math.ceil((debt + 1) * interval),
      retryAfterMs: 0,
    },
    state: { debt: debt + 1, at: nowMs },
  };
}

const PRUNE_AT = 100_000;

/** In-process buckets: exact for one instance; each instance has its own. */
export class LocalRateLimiter implements RateLimiter {
  /** Each bucket with the time its debt is paid back under the policy that last wrote it. */
  private readonly buckets = new Map<string, BucketState & { fullAt: number }>();

  take(key: string, policy: RateLimitPolicy, nowMs: number): RateLimitDecision {
    return this.takeSync(key, policy, nowMs);
  }

  takeSync(key: string, policy: RateLimitPolicy, nowMs: number): RateLimitDecision {
    const { decision, state } = gcraStep(this.buckets.get(key), policy, nowMs);
    if (state !== null) {
      if (this.buckets.size >= PRUNE_AT) this.prune(nowMs);
      this.buckets.set(key, { ...state, fullAt: nowMs + decision.resetMs });
    }
    return decision;
  }

  /** A bucket whose debt is paid back is full: forgetting it changes nothing. */
  private prune(nowMs: number): void {
    for (const [key, bucket] of this.buckets) if (bucket.fullAt <= nowMs) this.buckets.delete(key);
  }

  async close(): Promise<void> {}
}
