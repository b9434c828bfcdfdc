import { cidrWithin, parseCidrList } from '../lib/ip.js';
import type { QuotaLimits, RateLimitPolicy } from '../limits/index.js';
import { originEntryWithin } from './origins.js';
import type { RateLimitSetting } from './settings.js';

/**
 * What a key that manages keys is itself held to. A key may not create, change or rotate a key
 * into something it could not do itself — otherwise a key with a spend cap, an IP list or a slow
 * rate limit could lift its own limits by minting or editing another key.
 */
export interface ActorBounds {
  lineageId: string;
  rateLimitBucket: string;
  /** Null: the actor has no IP restriction. Canonical entries, as stored. */
  allowedIps: string[] | null;
  /** Null: the actor has no origin restriction. */
  allowedOrigins: string[] | null;
  /** Effective rate limit (its own, or the default). */
  rateLimit: RateLimitPolicy;
  /** Its own setting, which keys it creates inherit. */
  ownRateLimit: RateLimitSetting;
  quotas: QuotaLimits;
}

export interface BoundedCandidate {
  lineageId: string;
  rateLimitBucket: string;
  allowedIps: string[];
  ipRestrictionEnabled: boolean;
  allowedOrigins: string[];
  originRestrictionEnabled: boolean;
  rateLimit: RateLimitSetting;
  quotas: QuotaLimits;
}

const QUOTA_FIELDS: [keyof QuotaLimits, string][] = [
  ['dailyRequests', 'quotas.dailyRequests'],
  ['monthlyRequests', 'quotas.monthlyRequests'],
  ['dailySpendMicros', 'quotas.dailySpendUsd'],
  ['monthlySpendMicros', 'quotas.monthlySpendUsd'],
];

export function hasBoundingQuota(bounds: ActorBounds): boolean {
  return QUOTA_FIELDS.some(([field]) => bounds.quotas[field] !== null);
}

/** Whether the actor has a rate limit of its own (rather than the service default). */
export function hasOwnRateLimit(bounds: ActorBounds): boolean {
  return bounds.ownRateLimit.perSecond !== null || bounds.ownRateLimit.burst !== null;
}

/** The settings of `candidate` that are looser than the actor's own; empty when none are. */
export function looserThan(
  bounds: ActorBounds,
  candidate: BoundedCandidate,
  defaults: RateLimitPolicy,
): string[] {
  const looser: string[] = [];
  if (bounds.allowedIps !== null) {
    const outer = parseCidrList(bounds.allowedIps).cidrs;
    const inner = parseCidrList(candidate.allowedIps);
    const within =
      inner.problems.length === 0 && inner.cidrs.every((cidr) => outer.some((o) => cidrWithin(cidr, o)));
    if (!candidate.ipRestrictionEnabled || !within) looser.push('allowedIps');
  }
  if (bounds.allowedOrigins !== null) {
    const outer = bounds.allowedOrigins;
    if (
      !candidate.originRestrictionEnabled ||
      !candidate.allowedOrigins.every((o) => originEntryWithin(o, outer))
    ) {
      looser.push('allowedOrigins');
    }
  }
  if ((candidate.rateLimit.perSecond ?? defaults.perSecond) > bounds.rateLimit.perSecond) {
    looser.push('rateLimit.requestsPerSecond');
  }
  if ((candidate.rateLimit.burst ?? defaults.burst) > bounds.rateLimit.burst) looser.push('rateLimit.burst');
  for (const [field, name] of QUOTA_FIELDS) {
    const cap = bounds.quotas[field];
    const own = candidate.quotas[field];
    if (cap !== null && (own === null || own > cap)) looser.push(name);
  }
  // Quotas are counted per lineage: a capped actor's keys must draw on its own counters.
  if (hasBoundingQuota(bounds) && candidate.lineageId !== bounds.lineageId) looser.push('quotas (lineage)');
  // Likewise a rate-capped actor's keys must draw on its own bucket, or it could multiply its rate.
  if (hasOwnRateLimit(bounds) && candidate.rateLimitBucket !== bounds.rateLimitBucket) {
    looser.push('rateLimit (bucket)');
  }
  return [...new Set(looser)];
}
