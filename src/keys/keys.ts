import type { AccountMode } from '../accounts/accounts.js';
import type { Database, Queryable } from '../db/database.js';
import { AppError, type ValidationProblem, validationError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import { NO_QUOTAS, type QuotaLimits } from '../limits/quotas.js';
import { type ActorBounds, type BoundedCandidate, hasBoundingQuota, looserThan } from './bounds.js';
import { generateKey } from './format.js';
import type { Permission } from './permissions.js';
import {
  type KeySettingsInput,
  type LimitCeilings,
  type RateLimitSetting,
  resolveExpiry,
  resolveQuotas,
  resolveRateLimit,
  resolveRestrictions,
} from './settings.js';
import * as sql from './sql.js';

/** Active keys an account may hold at once; keys in their rotation grace period do not count. */
export const MAX_ACTIVE_KEYS = 25;
export const ROTATION_GRACE_MS = 60 * 60 * 1000;

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  keyPrefix: string;
  name: string;
  permissions: Permission[];
  expiresAt: Date | null;
  revokedAt: Date | null;
  allowedIps: string[];
  ipRestrictionEnabled: boolean;
  allowedOrigins: string[];
  originRestrictionEnabled: boolean;
  rotatedTo: string | null;
  rotatedFrom: string | null;
  createdAt: Date;
  /** Shared by a key and the keys rotated from it: quotas follow the lineage. */
  lineageId: string;
  rateLimit: RateLimitSetting;
  quotas: QuotaLimits;
}

export interface KeyRow {
  id: string;
  account_id: string;
  key_prefix: string;
  name: string;
  permissions: Permission[];
  expires_at: Date | null;
  revoked_at: Date | null;
  allowed_ips: string[];
  ip_restriction_enabled: boolean;
  allowed_origins: string[];
  origin_restriction_enabled: boolean;
  rotated_to: string | null;
  rotated_from: string | null;
  created_at: Date;
  lineage_id: string;
  rate_limit_per_second: number | null;
  rate_limit_burst: number | null;
  quota_daily_requests: bigint | null;
  quota_monthly_requests: bigint | null;
  quota_daily_spend_micros: bigint | null;
  quota_monthly_spend_micros: bigint | null;
}

export function quotasOf(row: Pick<KeyRow, `quota_${string}` & keyof KeyRow>): QuotaLimits {
  return {
    dailyRequests: row.quota_daily_requests,
    monthlyRequests: row.quota_monthly_requests,
    dailySpendMicros: row.quota_daily_spend_micros,
    monthlySpendMicros: row.quota_monthly_spend_micros,
  };
}

function toRecord(row: KeyRow): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    keyPrefix: row.key_prefix,
    name: row.name,
    permissions: row.permissions,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    allowedIps: row.allowed_ips,
    ipRestrictionEnabled: row.ip_restriction_enabled,
    allowedOrigins: row.allowed_origins,
    originRestrictionEnabled: row.origin_restriction_enabled,
    rotatedTo: row.rotated_to,
    rotatedFrom: row.rotated_from,
    createdAt: row.created_at,
    lineageId: row.lineage_id,
    rateLimit: { perSecond: row.rate_limit_per_second, burst: row.rate_limit_burst },
    quotas: quotasOf(row),
  };
}

export function isKeyActive(key: ApiKeyRecord, now: Date): boolean {
  return key.revokedAt === null && (key.expiresAt === null || key.expiresAt.getTime() > now.getTime());
}

/** Who manages keys: an API key of the account, or the operator (CLI), who is unbounded. */
export interface KeyActor {
  accountId: string;
  /** The actor's permissions: a key it creates or changes can have no more. */
  permissions: readonly Permission[];
  /** The actor's own expiry: a key it creates or changes may not outlive it. */
  expiresAt: Date | null;
  /** An API key's own restrictions and limits; absent for the operator. */
  bounds?: ActorBounds | undefined;
}

/** What the operator allows a key to be given through the API. */
export interface KeyPolicy {
  ceilings: LimitCeilings;
  /** The rate limit of keys that set none. */
  defaultRateLimit: { perSecond: number; burst: number };
}

export const OPERATOR_POLICY: KeyPolicy = {
  ceilings: { maxPerSecond: Number.MAX_SAFE_INTEGER, maxBurst: Number.MAX_SAFE_INTEGER },
  defaultRateLimit: { perSecond: Number.MAX_SAFE_INTEGER, burst: Number.MAX_SAFE_INTEGER },
};

function refuseLooser(actor: KeyActor, candidate: BoundedCandidate, policy: KeyPolicy): void {
  if (!actor.bounds) return;
  const looser = looserThan(actor.bounds, candidate, policy.defaultRateLimit);
  if (looser.length > 0) {
    throw new AppError(
      'PERMISSION_DENIED',
      `A key cannot give a key looser limits than its own: ${looser.join(', ')}`,
      { details: { looser } },
    );
  }
}

export interface IssuedKey {
  record: ApiKeyRecord;
  /** The full secret, shown once. */
  key: string;
}

type NewKeySettings = Omit<
  ApiKeyRecord,
  'id' | 'accountId' | 'keyPrefix' | 'revokedAt' | 'rotatedTo' | 'createdAt' | 'lineageId'
> & { lineageId: string | null };

async function insertKey(
  tx: Queryable,
  clock: Clock,
  mode: AccountMode,
  accountId: string,
  settings: NewKeySettings,
): Promise<IssuedKey> {
  const generated = generateKey(mode);
  const [row] = await tx.query<KeyRow>(sql.INSERT_KEY, [
    newId('key'),
    accountId,
    generated.hash,
    generated.prefix,
    settings.name,
    settings.permissions,
    settings.expiresAt,
    settings.allowedIps,
    settings.ipRestrictionEnabled,
    settings.allowedOrigins,
    settings.originRestrictionEnabled,
    settings.rotatedFrom,
    clock.now(),
    settings.lineageId,
    settings.rateLimit.perSecond,
    settings.rateLimit.burst,
    settings.quotas.dailyRequests,
    settings.quotas.monthlyRequests,
    settings.quotas.dailySpendMicros,
    settings.quotas.monthlySpendMicros,
  ]);
  return { record: toRecord(row as KeyRow), key: generated.key };
}

async function lockAccount(tx: Queryable, accountId: string): Promise<AccountMode> {
  const [account] = await tx.query<{ mode: AccountMode }>(sql.LOCK_ACCOUNT, [accountId]);
  if (!account) throw new AppError('ACCOUNT_NOT_FOUND', `Account ${accountId} does not exist`);
  return account.mode;
}

/** Call with the account row locked, so the count cannot be raced past the cap. */
async function assertRoomForKey(tx: Queryable, accountId: string, now: Date): Promise<void> {
  const [count] = await tx.query<{ n: bigint }>(sql.COUNT_ACTIVE, [accountId, now]);
  if (Number(count?.n ?? 0) >= MAX_ACTIVE_KEYS) {
    throw new AppError('MAX_KEYS_EXCEEDED', `An account can hold at most ${MAX_ACTIVE_KEYS} active keys`, {
      details: { maxKeys: MAX_ACTIVE_KEYS },
    });
  }
}

function beyondActor(actor: KeyActor, permissions: readonly Permission[]): Permission[] {
  return permissions.filter((p) => !actor.permissions.includes(p));
}

function expiryProblem(actor: KeyActor, expiresAt: Date | null, problems: ValidationProblem[]): void {
  if (actor.expiresAt && (expiresAt === null || expiresAt.getTime() > actor.expiresAt.getTime())) {
    problems.push({
      path: 'expiresAt',
      message: 'cannot be later than the expiry of the key making the change',
    });
  }
}

/** A key may only manage keys that have no permission it lacks itself (or it could escalate). */
async function lockManagedKey(tx: Queryable, actor: KeyActor, keyId: string): Promise<ApiKeyRecord> {
  const [row] = await tx.query<KeyRow>(sql.SELECT_KEY_FOR_UPDATE, [keyId, actor.accountId]);
  if (!row) throw new AppError('NOT_FOUND', `Key ${keyId} not found`);
  const key = toRecord(row);
  const beyond = beyondActor(actor, key.permissions);
  if (beyond.length > 0) {
    throw new AppError(
      'PERMISSION_DENIED',
      `This API key cannot manage a key with permissions it lacks: ${beyond.join(', ')}`,
      {
        details: { permissions: beyond },
      },
    );
  }
  return key;
}

export async function createKey(
  db: Database,
  clock: Clock,
  actor: KeyActor,
  input: KeySettingsInput & { name: string },
  policy: KeyPolicy = OPERATOR_POLICY,
): Promise<IssuedKey> {
  const now = clock.now();
  const problems: ValidationProblem[] = [];
  const name = input.name.trim();
  if (name.length === 0) problems.push({ path: 'name', message: 'must not be blank' });
  const permissions = [...new Set(input.permissions ?? actor.permissions)];
  const expiresAt = resolveExpiry(input.expiresAt, now, problems) ?? actor.expiresAt;
  expiryProblem(actor, expiresAt, problems);
  // A restricted creator's restrictions and limits are the new key's defaults, as its permissions are.
  const bounds = actor.bounds;
  const restrictions = resolveRestrictions(
    input,
    {
      allowedIps: bounds?.allowedIps ?? [],
      ipRestrictionEnabled: Boolean(bounds?.allowedIps),
      allowedOrigins: bounds?.allowedOrigins ?? [],
      originRestrictionEnabled: Boolean(bounds?.allowedOrigins),
    },
    problems,
  );
  const rateLimit = resolveRateLimit(
    input.rateLimit,
    bounds?.ownRateLimit ?? { perSecond: null, burst: null },
    policy.ceilings,
    problems,
  );
  const quotas = resolveQuotas(input.quotas, bounds?.quotas ?? NO_QUOTAS, problems);
  if (problems.length > 0) throw validationError(problems);
  const beyond = beyondActor(actor, permissions);
  if (beyond.length > 0) {
    throw new AppError(
      'PERMISSION_DENIED',
      `A key cannot grant permissions its creator lacks: ${beyond.join(', ')}`,
      {
        details: { permissions: beyond },
      },
    );
  }
  // A capped creator's keys draw on its own quota counters.
  const lineageId = bounds && hasBoundingQuota(bounds) ? bounds.lineageId : null;
  refuseLooser(actor, { ...restrictions, rateLimit, quotas, lineageId: lineageId ?? '' }, policy);

  return db.transaction(async (tx) => {
    const mode = await lockAccount(tx, actor.accountId);
    await assertRoomForKey(tx, actor.accountId, now);
    return insertKey(tx, clock, mode, actor.accountId, {
      name,
      permissions,
      expiresAt,
      ...restrictions,
      rateLimit,
      quotas,
      rotatedFrom: null,
      lineageId,
    });
  });
}

/** Changes any setting of a key but its secret; fields left out keep their value. */
export async function updateKey(
  db: Database,
  clock: Clock,
  actor: KeyActor,
  keyId: string,
  input: KeySettingsInput,
  policy: KeyPolicy = OPERATOR_POLICY,
): Promise<ApiKeyRecord> {
  const now = clock.now();
  return db.transaction(async (tx) => {
    // Account first, as in createKey and rotateKey: one lock order, and a stable key count.
    await lockAccount(tx, actor.accountId);
    const key = await lockManagedKey(tx, actor, keyId);
    if (key.revokedAt)
      throw validationError([{ path: 'keyId', message: 'key is revoked and cannot be changed' }]);
    const problems: ValidationProblem[] = [];
    const name = input.name === undefined ? key.name : input.name.trim();
    if (name.length === 0) problems.push({ path: 'name', message: 'must not be blank' });
    const permissions = input.permissions === undefined ? key.permissions : [...new Set(input.permissions)];
    const resolved = resolveExpiry(input.expiresAt, now, problems);
    const expiresAt = resolved === undefined ? key.expiresAt : resolved;
    if (input.expiresAt !== undefined) expiryProblem(actor, expiresAt, problems);
    if (key.rotatedTo && input.expiresAt !== undefined) {
      problems.push({ path: 'expiresAt', message: 'cannot change during a rotation grace period' });
    }
    const restrictions = resolveRestrictions(input, key, problems);
    const rateLimit = resolveRateLimit(input.rateLimit, key.rateLimit, policy.ceilings, problems);
    const quotas = resolveQuotas(input.quotas, key.quotas, problems);
    if (problems.length > 0) throw validationError(problems);
    const beyond = beyondActor(actor, permissions);
    if (beyond.length > 0) {
      throw new AppError(
        'PERMISSION_DENIED',
        `A key cannot grant permissions its creator lacks: ${beyond.join(', ')}`,
        {
          details: { permissions: beyond },
        },
      );
    }
    refuseLooser(actor, { ...restrictions, rateLimit, quotas, lineageId: key.lineageId }, policy);
    // Bringing an expired key back to life makes it active again: it must fit under the cap.
    const revived = !isKeyActive(key, now) && (expiresAt === null || expiresAt.getTime() > now.getTime());
    if (revived) await assertRoomForKey(tx, actor.accountId, now);
    const [row] = await tx.query<KeyRow>(sql.UPDATE_KEY, [
      keyId,
      actor.accountId,
      name,
      permissions,
      expiresAt,
      restrictions.allowedIps,
      restrictions.ipRestrictionEnabled,
      restrictions.allowedOrigins,
      restrictions.originRestrictionEnabled,
      rateLimit.perSecond,
      rateLimit.burst,
      quotas.dailyRequests,
      quotas.monthlyRequests,
      quotas.dailySpendMicros,
      quotas.monthlySpendMicros,
    ]);
    await tx.query(sql.RECORD_AUTH_CHANGE, [actor.accountId]);
    return toRecord(row as KeyRow);
  });
}

/**
 * Issues a new key with every setting of the old one (quotas included: both share a lineage); the
 * old key stays valid for 60 more minutes (or until its own expiry, if sooner). A key already
 * rotated is in its grace period until then: rotating it again is KEY_ROTATION_IN_PROGRESS.
 */
export async function rotateKey(
  db: Database,
  clock: Clock,
  actor: KeyActor,
  keyId: string,
  policy: KeyPolicy = OPERATOR_POLICY,
): Promise<{ newKey: IssuedKey; oldKey: ApiKeyRecord }> {
  const now = clock.now();
  return db.transaction(async (tx) => {
    const mode = await lockAccount(tx, actor.accountId);
    const old = await lockManagedKey(tx, actor, keyId);
    if (old.revokedAt) {
      throw validationError([{ path: 'keyId', message: 'key is revoked and cannot be rotated' }]);
    }
    const expired = old.expiresAt !== null && old.expiresAt.getTime() <= now.getTime();
    if (old.rotatedTo && !expired) {
      throw new AppError(
        'KEY_ROTATION_IN_PROGRESS',
        `Key ${keyId} was already rotated; its grace period is running`,
        {
          details: { newKeyId: old.rotatedTo, gracePeriodEndsAt: old.expiresAt?.toISOString() },
        },
      );
    }
    if (expired) throw validationError([{ path: 'keyId', message: 'key has expired and cannot be rotated' }]);
    // The new key gets the old one's settings and a secret the actor will hold: no looser than the actor.
    refuseLooser(actor, old, policy);
    const expiryProblems: ValidationProblem[] = [];
    expiryProblem(actor, old.expiresAt, expiryProblems);
    if (expiryProblems.length > 0) {
      throw new AppError('PERMISSION_DENIED', 'A key cannot rotate a key that outlives it', {
        details: { looser: ['expiresAt'] },
      });
    }

    const newKey = await insertKey(tx, clock, mode, actor.accountId, {
      name: old.name,
      permissions: old.permissions,
      expiresAt: old.expiresAt,
      allowedIps: old.allowedIps,
      ipRestrictionEnabled: old.ipRestrictionEnabled,
      allowedOrigins: old.allowedOrigins,
      originRestrictionEnabled: old.originRestrictionEnabled,
      rateLimit: old.rateLimit,
      quotas: old.quotas,
      rotatedFrom: old.id,
      lineageId: old.lineageId,
    });
    const graceEnd = new Date(now.getTime() + ROTATION_GRACE_MS);
    const oldExpiry =
      old.expiresAt && old.expiresAt.getTime() < graceEnd.getTime() ? old.expiresAt : graceEnd;
    const [updated] = await tx.query<KeyRow>(sql.MARK_ROTATED, [old.id, newKey.record.id, oldExpiry]);
    await tx.query(sql.RECORD_AUTH_CHANGE, [actor.accountId]);
    return { newKey, oldKey: toRecord(updated as KeyRow) };
  });
}

/** Revokes at once; revoking a revoked key changes nothing. */
export async function revokeKey(
  db: Database,
  clock: Clock,
  actor: KeyActor,
  keyId: string,
): Promise<ApiKeyRecord> {
  return db.transaction(async (tx) => {
    await lockManagedKey(tx, actor, keyId);
    const [row] = await tx.query<KeyRow>(sql.REVOKE_KEY, [keyId, clock.now()]);
    await tx.query(sql.RECORD_AUTH_CHANGE, [actor.accountId]);
    return toRecord(row as KeyRow);
  });
}

export async function listKeys(db: Queryable, accountId: string): Promise<ApiKeyRecord[]> {
  const rows = await db.query<KeyRow>(sql.LIST_KEYS, [accountId]);
  return rows.map(toRecord);
}
