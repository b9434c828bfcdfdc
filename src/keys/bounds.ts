import { type Cidr, cidrContains, parseCidr } from '../lib/ip.js';
import type { QuotaLimits } from '../limits/quotas.js';
import type { RateLimitSetting } from './settings.js';

/**
 * What a key that manages keys is itself held to. A key may not create, change or rotate a key
 * into something it could not do itself — otherwise a key with a spend cap, an IP list or a slow
 * rate limit could lift its own limits by minting or editing another key.
 */
export interface ActorBounds {
  lineageId: string;
  /** Null: the actor has no IP restriction. Canonical entries, as stored. */
  allowedIps: string[] | null;
  /** Null: the actor has no origin restriction. */
  allowedOrigins: string[] | null;
  /** Effective rate limit (its own, or the default). */
  rateLimit: { perSecond: number; burst: number };
  /** Its own setting, which keys it creates inherit. */
  ownRateLimit: RateLimitSetting;
  quotas: QuotaLimits;
}

export interface BoundedCandidate {
  lineageId: string;
  allowedIps: string[];
  ipRestrictionEnabled: boolean;
  allowedOrigins: string[];
  originRestrictionEnabled: boolean;
  rateLimit: RateLimitSetting;
  quotas: QuotaLimits;
}

function cidrWithin(inner: Cidr, outer: Cidr): boolean {
  return (
    inner.version === outer.version &&
    outer.prefix <= inner.prefix &&
    cidrContains(outer, { version: inner.version, value: inner.base })
  );
}

function originWithin(origin: string, allowed: string[]): boolean {
  if (allowed.includes(origin)) return true;
  if (origin.includes('*')) return false;
  return allowed.some((entry) => {
    const wildcard = /^(https?:)\/\/\*\.(.+)$/.exec(entry);
    if (!wildcard) return false;
    const url = new URL(origin);
    return url.protocol === wildcard[1] && url.host.endsWith(`.${wildcard[2]}`);
  });
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

/** The settings of `candidate` that are looser than the actor's own; empty when none are. */
export function looserThan(
  bounds: ActorBounds,
  candidate: BoundedCandidate,
  defaults: { perSecond: number; burst: number },
): string[] {
  const looser: string[] = [];
  if (bounds.allowedIps !== null) {
    const outer = bounds.allowedIps.flatMap((entry) => {
      const parsed = parseCidr(entry);
      return 'cidr' in parsed ? [parsed.cidr] : [];
    });
    const within = candidate.allowedIps.every((entry) => {
      const parsed = parseCidr(entry);
      return 'cidr' in parsed && outer.some((o) => cidrWithin(parsed.cidr, o));
    });
    if (!candidate.ipRestrictionEnabled || !within) looser.push('allowedIps');
  }
  if (bounds.allowedOrigins !== null) {
    const outer = bounds.allowedOrigins;
    if (
      !candidate.originRestrictionEnabled ||
      !candidate.allowedOrigins.every((o) => originWithin(o, outer))
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
  return [...new Set(looser)];
}
