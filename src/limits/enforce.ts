import type { FastifyReply } from 'fastify';
import { AppError } from '../errors.js';
import type { Principal } from '../keys/authenticate.js';
import { formatUsd } from '../lib/money.js';
import type { QuotaLimits, QuotaRefusal } from './quotas.js';
import type { RateLimiter, RateLimitPolicy } from './rate-limiter.js';

/** Headers a browser may read on a cross-origin answer. */
export const EXPOSED_HEADERS =
  'x-request-id, ratelimit-limit, ratelimit-remaining, ratelimit-reset, retry-after';

export function policyFor(principal: Principal, defaults: RateLimitPolicy): RateLimitPolicy {
  const own = principal.verification.rateLimit;
  return { perSecond: own.perSecond ?? defaults.perSecond, burst: own.burst ?? defaults.burst };
}

/**
 * Takes one request from the key's bucket and writes the RateLimit-Limit/-Remaining/-Reset headers
 * (IETF draft-ietf-httpapi-ratelimit-headers, the three-field form of drafts ≤ 06) on the answer,
 * whatever it turns out to be; a refusal is 429 RATE_LIMIT_EXCEEDED with Retry-After.
 */
export async function takeRateLimit(
  limiter: RateLimiter,
  principal: Principal,
  defaults: RateLimitPolicy,
  nowMs: number,
  reply: FastifyReply,
): Promise<void> {
  const taken = limiter.take(principal.keyId, policyFor(principal, defaults), nowMs);
  const decision = taken instanceof Promise ? await taken : taken;
  reply.header('ratelimit-limit', String(decision.limit));
  reply.header('ratelimit-remaining', String(decision.remaining));
  reply.header('ratelimit-reset', String(Math.ceil(decision.resetMs / 1000)));
  if (!decision.allowed) {
    const retryAfter = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
    throw new AppError(
      'RATE_LIMIT_EXCEEDED',
      `Rate limit of ${decision.limit} requests exceeded; retry in ${retryAfter} s`,
      {
        headers: { 'retry-after': String(retryAfter) },
        details: { limit: decision.limit, retryAfterSeconds: retryAfter },
      },
    );
  }
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
