import { AppError } from '../errors.js';
import { formatUsd } from '../lib/money.js';
import type { QuotaLimits, QuotaRefusal } from './quotas.js';
import type { RateLimiter, RateLimitPolicy } from './rate-limiter.js';

/** Headers a browser may read on a cross-origin answer. */
export const EXPOSED_HEADERS =
  'x-request-id, ratelimit-limit, ratelimit-remaining, ratelimit-reset, retry-after';

/**
 * What the limits read of the key that acts (the keys room's `Principal` is one): its bucket and its
 * own policy, each field null for the default. Stated here so that limits, below keys, names no key.
 */
export interface LimitedKey {
  verification: {
    rateLimitBucket: string;
    rateLimit: { [K in keyof RateLimitPolicy]: RateLimitPolicy[K] | null };
  };
}

export function policyFor(principal: LimitedKey, defaults: RateLimitPolicy): RateLimitPolicy {
  const own = principal.verification.rateLimit;
  return { perSecond: own.perSecond ?? defaults.perSecond, burst: own.burst ?? defaults.burst };
}

export interface RateLimitOutcome {
  /** RateLimit-Limit/-Remaining/-Reset, for the answer whatever it turns out to be. */
  headers: Record<string, string>;
  /** 429 RATE_LIMIT_EXCEEDED (with Retry-After) when the bucket is empty; null when admitted. */
  refusal: AppError | null;
}

/**
 * Takes one request from the key's bucket (which its children and rotation successors may share:
 * each request is measured against the calling key's own policy). The headers follow the IETF
 * draft-ietf-httpapi-ratelimit-headers (the three-field form of drafts ≤ 06); the HTTP edge sets
 * them and throws the refusal, if any.
 */
export async function takeRateLimit(
  limiter: RateLimiter,
  principal: LimitedKey,
  defaults: RateLimitPolicy,
  nowMs: number,
): Promise<RateLimitOutcome> {
  const taken = limiter.take(principal.verification.rateLimitBucket, policyFor(principal, defaults), nowMs);
  const decision = taken instanceof Promise ? await taken : taken;
  const headers = {
    'ratelimit-limit': String(decision.limit),
    'ratelimit-remaining': String(decision.remaining),
    'ratelimit-reset': String(Math.ceil(decision.resetMs / 1000)),
  };
  if (decision.allowed) return { headers, refusal: null };
  const retryAfter = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  const refusal = new AppError(
    'RATE_LIMIT_EXCEEDED',
    `Rate limit of ${decision.limit} requests exceeded; retry in ${retryAfter} s`,
    {
      headers: { 'retry-after': String(retryAfter) },
      details: { limit: decision.limit, retryAfterSeconds: retryAfter },
    },
  );
  return { headers, refusal };
}

/**
 * A limit of one operation's own, beside the key's rate limit: one request taken from `bucket` (in
 * the same limiter, so shared by every API instance through Redis when it is configured). The 429
 * to answer, with Retry-After, or null when admitted. `what` names the operation in the message.
 */
export async function takeOperationLimit(
  limiter: RateLimiter,
  bucket: string,
  policy: RateLimitPolicy,
  nowMs: number,
  what: string,
): Promise<AppError | null> {
  const taken = limiter.take(bucket, policy, nowMs);
  const decision = taken instanceof Promise ? await taken : taken;
  if (decision.allowed) return null;
  const retryAfter = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  return new AppError(
    'RATE_LIMIT_EXCEEDED',
    `Limit of ${decision.limit} ${what} exceeded; retry in ${retryAfter} s`,
    {
      headers: { 'retry-after': String(retryAfter) },
      details: { limit: decision.limit, retryAfterSeconds: retryAfter },
    },
  );
}

export function quotaError(refusal: QuotaRefusal, limits: QuotaLimits, nowMs: number): AppError {
  const cap =
    refusal.limit === 'requests'
      ? String(refusal.period === 'day' ? limits.dailyRequests : limits.monthlyRequests)
      : `${formatUsd((refusal.period === 'day' ? limits.dailySpendMicros : limits.monthlySpendMicros) ?? 0n)} USD`;
  const what = refusal.limit === 'requests' ? 'request' : 'spend';
  const retryAfter = Math.max(1, Math.ceil((refusal.resetsAt.getTime() - nowMs) / 1000));
  return new AppError(
    'QUOTA_EXCEEDED',
    `The key's ${refusal.period === 'day' ? 'daily' : 'monthly'} ${what} quota (${cap}) is used up until ${refusal.resetsAt.toISOString()}`,
    {
      headers: { 'retry-after': String(retryAfter) },
      details: {
        period: refusal.period,
        limit: refusal.limit,
        quota: cap,
        resetsAt: refusal.resetsAt.toISOString(),
      },
    },
  );
}
