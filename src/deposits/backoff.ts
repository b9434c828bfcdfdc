/** Exponential backoff with full jitter (AWS Architecture Blog, "Exponential Backoff and Jitter"). */
export interface RetryPolicy {
  /** The ceiling of the first retry's delay. */
  baseDelayMs: number;
  /** No delay grows past this, whatever the attempt. */
  maxDelayMs: number;
}

/** The longest Retry-After waited for: a provider asking for more is asked again after this. */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * The delay before retrying after failed attempt `attempt` (from 1): uniform in
 * [0, min(max, base·2^(attempt−1))), so many clients failing together spread out — but never less
 * than what the provider asked for in Retry-After (capped at MAX_RETRY_AFTER_MS).
 * `random` is in [0, 1).
 */
export function retryDelayMs(
  policy: RetryPolicy,
  attempt: number,
  random: number,
  retryAfterMs?: number,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  const jittered = Math.floor(random * ceiling);
  return retryAfterMs === undefined
    ? jittered
    : Math.max(jittered, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
}
