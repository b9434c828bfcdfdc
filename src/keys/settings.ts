import type { ValidationProblem } from '../errors.js';
import { formatCidr, parseCidrList } from '../lib/ip.js';
import { BIDI_CONTROLS_TEXT, hasBidiControl, isBlankLabel, trimInvisible } from '../lib/labels.js';
import { parseUsd } from '../lib/money.js';
import { parseIsoTimestamp } from '../lib/time.js';
import type { QuotaLimits, RateLimitPolicy } from '../limits/index.js';
import { normaliseOrigin } from './origins.js';
import type { Permission } from './permissions.js';

export const MAX_ALLOW_LIST_ENTRIES = 100;

/**
 * A key's name as it is kept, by the rule of outcome labels (docs/api.md#api-keys): spaces and invisible
 * code points at either end go (`\ufeffprod` is `prod`); a name with nothing visible is blank, and
 * refused; bidirectional controls, which reorder how the text after them is shown, are refused.
 */
export function resolveKeyName(text: string, problems: ValidationProblem[]): string {
  const name = trimInvisible(text);
  if (isBlankLabel(name)) problems.push({ path: 'body.name', message: 'must not be blank' });
  if (hasBidiControl(text)) {
    problems.push({
      path: 'body.name',
      message: `must not contain bidirectional controls (${BIDI_CONTROLS_TEXT})`,
    });
  }
  return name;
}

/** The settings a caller may give a key, as they arrive (already schema-checked for types). */
export interface KeySettingsInput {
  name?: string | undefined;
  permissions?: Permission[] | undefined;
  expiresAt?: string | null | undefined;
  allowedIps?: string[] | undefined;
  ipRestrictionEnabled?: boolean | undefined;
  allowedOrigins?: string[] | undefined;
  originRestrictionEnabled?: boolean | undefined;
  rateLimit?: { requestsPerSecond: number; burst: number } | null | undefined;
  quotas?: QuotasInput | undefined;
}

export interface QuotasInput {
  dailyRequests?: number | null | undefined;
  monthlyRequests?: number | null | undefined;
  dailySpendUsd?: string | null | undefined;
  monthlySpendUsd?: string | null | undefined;
}

/** A key's own rate limit; nulls mean the service default. */
export type RateLimitSetting = { [K in keyof RateLimitPolicy]: RateLimitPolicy[K] | null };

/** The most a key may be given through the API (operator configuration). */
export interface LimitCeilings {
  maxPerSecond: number;
  maxBurst: number;
}

export interface KeyRestrictions {
  allowedIps: string[];
  ipRestrictionEnabled: boolean;
  allowedOrigins: string[];
  originRestrictionEnabled: boolean;
}

/** Canonical allow-list entries (`10.0.0.0/8`, `2001:db8::/32`); problems name each bad entry. */
export function normaliseAllowedIps(
  entries: string[],
  problems: ValidationProblem[],
  path: string,
): string[] {
  const parsed = parseCidrList(entries);
  for (const p of parsed.problems) {
    problems.push({ path: `${path}[${p.index}]`, message: `"${p.entry}" ${p.error}` });
  }
  return [...new Set(parsed.cidrs.map(formatCidr))];
}

export function normaliseAllowedOrigins(
  entries: string[],
  problems: ValidationProblem[],
  path: string,
): string[] {
  const out: string[] = [];
  entries.forEach((entry, i) => {
    const normalised = normaliseOrigin(entry);
    if ('error' in normalised)
      problems.push({ path: `${path}[${i}]`, message: `"${entry}" ${normalised.error}` });
    else out.push(normalised.origin);
  });
  return [...new Set(out)];
}

/**
 * Allow lists and their switches. A switch left out follows its list (a list given means "enforce
 * it"); a switch turned on over an empty list would lock every caller out, so it is refused.
 */
export function resolveRestrictions(
  input: KeySettingsInput,
  current: KeyRestrictions,
  problems: ValidationProblem[],
): KeyRestrictions {
  const allowedIps =
    input.allowedIps === undefined
      ? current.allowedIps
      : normaliseAllowedIps(input.allowedIps, problems, 'body.allowedIps');
  const allowedOrigins =
    input.allowedOrigins === undefined
      ? current.allowedOrigins
      : normaliseAllowedOrigins(input.allowedOrigins, problems, 'body.allowedOrigins');
  const ipRestrictionEnabled =
    input.ipRestrictionEnabled ??
    (input.allowedIps === undefined ? current.ipRestrictionEnabled : allowedIps.length > 0);
  const originRestrictionEnabled =
    input.originRestrictionEnabled ??
    (input.allowedOrigins === undefined ? current.originRestrictionEnabled : allowedOrigins.length > 0);
  if (ipRestrictionEnabled && allowedIps.length === 0) {
    problems.push({ path: 'body.ipRestrictionEnabled', message: 'needs at least one entry in allowedIps' });
  }
  if (originRestrictionEnabled && allowedOrigins.length === 0) {
    problems.push({
      path: 'body.originRestrictionEnabled',
      message: 'needs at least one entry in allowedOrigins',
    });
  }
  return { allowedIps, ipRestrictionEnabled, allowedOrigins, originRestrictionEnabled };
}

/** `expiresAt`: null/absent → none; otherwise strict ISO 8601 in the future. */
export function resolveExpiry(
  text: string | null | undefined,
  now: Date,
  problems: ValidationProblem[],
): Date | null | undefined {
  if (text === undefined) return undefined;
  if (text === null) return null;
  const parsed = parseIsoTimestamp(text);
  if (!parsed) {
    problems.push({
      path: 'body.expiresAt',
      message: 'must be an ISO 8601 timestamp with a zone, e.g. 2027-01-31T00:00:00Z',
    });
    return undefined;
  }
  if (parsed.getTime() <= now.getTime()) {
    problems.push({ path: 'body.expiresAt', message: 'must be in the future' });
    return undefined;
  }
  return parsed;
}

export function resolveRateLimit(
  input: KeySettingsInput['rateLimit'],
  current: RateLimitSetting,
  ceilings: LimitCeilings,
  problems: ValidationProblem[],
): RateLimitSetting {
  if (input === undefined) return current;
  if (input === null) return { perSecond: null, burst: null };
  if (input.requestsPerSecond > ceilings.maxPerSecond) {
    problems.push({
      path: 'body.rateLimit.requestsPerSecond',
      message: `must be at most ${ceilings.maxPerSecond}`,
    });
  }
  if (input.burst > ceilings.maxBurst) {
    problems.push({ path: 'body.rateLimit.burst', message: `must be at most ${ceilings.maxBurst}` });
  }
  return { perSecond: input.requestsPerSecond, burst: input.burst };
}

/** Each quota given replaces the current one; null removes it; one left out is kept. */
export function resolveQuotas(
  input: QuotasInput | undefined,
  current: QuotaLimits,
  problems: ValidationProblem[],
): QuotaLimits {
  if (input === undefined) return current;
  const count = (value: number | null | undefined, kept: bigint | null) =>
    value === undefined ? kept : value === null ? null : BigInt(value);
  const spend = (value: string | null | undefined, kept: bigint | null, path: string) => {
    if (value === undefined) return kept;
    if (value === null) return null;
    const micros = parseUsd(value);
    if (micros === null) {
      problems.push({ path, message: 'must be a USD amount such as "25.00" (at most 6 decimals)' });
      return kept;
    }
    return micros;
  };
  return {
    dailyRequests: count(input.dailyRequests, current.dailyRequests),
    monthlyRequests: count(input.monthlyRequests, current.monthlyRequests),
    dailySpendMicros: spend(input.dailySpendUsd, current.dailySpendMicros, 'body.quotas.dailySpendUsd'),
    monthlySpendMicros: spend(
      input.monthlySpendUsd,
      current.monthlySpendMicros,
      'body.quotas.monthlySpendUsd',
    ),
  };
}

/**
 * The domain rules of a key's settings, on a body the schema refused (RouteSpec.bodyRules): each
 * field of the right type is checked as createKey and updateKey check it, so that one answer names
 * an unknown permission, an expiry that does not parse and an allow-list entry with host bits set
 * together. Fields of the wrong type are the schema's to report.
 */
export function keyBodyRules(body: unknown, now: Date): ValidationProblem[] {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return [];
  const input = body as Record<string, unknown>;
  const problems: ValidationProblem[] = [];
  if (typeof input.name === 'string') resolveKeyName(input.name, problems);
  if (typeof input.expiresAt === 'string') resolveExpiry(input.expiresAt, now, problems);
  const eachText = (field: 'allowedIps' | 'allowedOrigins', check: typeof normaliseAllowedIps) => {
    const entries = input[field];
    if (!Array.isArray(entries)) return;
    entries.forEach((entry, index) => {
      if (typeof entry !== 'string') return;
      const found: ValidationProblem[] = [];
      check([entry], found, 'entry');
      for (const { message } of found) problems.push({ path: `body.${field}[${index}]`, message });
    });
  };
  eachText('allowedIps', normaliseAllowedIps);
  eachText('allowedOrigins', normaliseAllowedOrigins);
  const quotas = input.quotas;
  if (typeof quotas === 'object' && quotas !== null) {
    for (const field of ['dailySpendUsd', 'monthlySpendUsd'] as const) {
      const value = (quotas as Record<string, unknown>)[field];
      if (typeof value === 'string' && parseUsd(value) === null)
        problems.push({
          path: `body.quotas.${field}`,
          message: 'must be a USD amount such as "25.00" (at most 6 decimals)',
        });
    }
  }
  return problems;
}
