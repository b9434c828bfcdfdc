import { type Context, withTransaction } from '../context.js';
import { AppError, type ValidationProblem, validationError } from '../errors.js';
import { NO_QUOTAS } from '../limits/index.js';
import { hasBoundingQuota, hasOwnRateLimit } from './bounds.js';
import {
  assertRoomForKey,
  type KeyActor,
  type KeyPolicy,
  OPERATOR_POLICY,
  ROTATION_GRACE_MS,
  refuseLooser,
  refuseUnmanageable,
  refuseWiderPermissions,
} from './policy.js';
import {
  type ApiKeyRecord,
  type IssuedKey,
  insertKey,
  isKeyActive,
  lockAccount,
  lockKey,
  markRotated,
  recordAuthChange,
  revokeKeyRow,
  updateKeyRow,
} from './rows.js';
import {
  type KeySettingsInput,
  resolveExpiry,
  resolveKeyName,
  resolveQuotas,
  resolveRateLimit,
  resolveRestrictions,
} from './settings.js';

/** The verbs that change keys: each one transaction, under the account's row lock. */

/**
 * Who changes a key (the calling key, the dashboard's account owner, or the operator) and what bounds
 * them: an actor gets nothing looser than itself, and no more than the policy's ceilings.
 */
export interface KeyVerbInput {
  actor: KeyActor;
  policy?: KeyPolicy | undefined;
}

export async function createKey(
  ctx: Context,
  {
    actor,
    settings: input,
    policy = OPERATOR_POLICY,
  }: KeyVerbInput & { settings: KeySettingsInput & { name: string } },
): Promise<IssuedKey> {
  const { clock } = ctx;
  const now = clock.now();
  const problems: ValidationProblem[] = [];
  const name = resolveKeyName(input.name, problems);
  const permissions = [...new Set(input.permissions ?? actor.permissions)];
  const expiresAt = resolveExpiry(input.expiresAt, now, problems) ?? actor.expiresAt;
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
  refuseWiderPermissions(actor, permissions);
  // A capped creator's keys draw on its own quota counters, and a rate-capped one's on its bucket.
  const lineageId = bounds && hasBoundingQuota(bounds) ? bounds.lineageId : null;
  const rateLimitBucket = bounds && hasOwnRateLimit(bounds) ? bounds.rateLimitBucket : null;
  refuseLooser(
    actor,
    {
      ...restrictions,
      expiresAt,
      rateLimit,
      quotas,
      lineageId: lineageId ?? '',
      rateLimitBucket: rateLimitBucket ?? '',
    },
    policy,
  );

  return withTransaction(ctx, async ({ tx }) => {
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
      rateLimitBucket,
    });
  });
}

/** Changes any setting of a key but its secret; fields left out keep their value. */
export async function updateKey(
  ctx: Context,
  {
    actor,
    keyId,
    settings: input,
    policy = OPERATOR_POLICY,
  }: KeyVerbInput & { keyId: string; settings: KeySettingsInput },
): Promise<ApiKeyRecord> {
  const now = ctx.clock.now();
  return withTransaction(ctx, async ({ tx }) => {
    // Account first, as in createKey and rotateKey: one lock order, and a stable key count.
    await lockAccount(tx, actor.accountId);
    const key = await lockKey(tx, actor.accountId, keyId);
    refuseUnmanageable(actor, key);
    if (key.revokedAt)
      throw validationError([{ path: 'path.keyId', message: 'key is revoked and cannot be changed' }]);
    const problems: ValidationProblem[] = [];
    const name = input.name === undefined ? key.name : resolveKeyName(input.name, problems);
    const permissions = input.permissions === undefined ? key.permissions : [...new Set(input.permissions)];
    const resolved = resolveExpiry(input.expiresAt, now, problems);
    const expiresAt = resolved === undefined ? key.expiresAt : resolved;
    if (key.rotatedTo && input.expiresAt !== undefined) {
      problems.push({ path: 'body.expiresAt', message: 'cannot change during a rotation grace period' });
    }
    const restrictions = resolveRestrictions(input, key, problems);
    const rateLimit = resolveRateLimit(input.rateLimit, key.rateLimit, policy.ceilings, problems);
    const quotas = resolveQuotas(input.quotas, key.quotas, problems);
    if (problems.length > 0) throw validationError(problems);
    refuseWiderPermissions(actor, permissions);
    refuseLooser(
      actor,
      {
        ...restrictions,
        expiresAt,
        rateLimit,
        quotas,
        lineageId: key.lineageId,
        rateLimitBucket: key.rateLimitBucket,
      },
      policy,
    );
    // Bringing an expired key back to life makes it active again: it must fit under the cap.
    const revived = !isKeyActive(key, now) && (expiresAt === null || expiresAt.getTime() > now.getTime());
    if (revived) await assertRoomForKey(tx, actor.accountId, now);
    const updated = await updateKeyRow(tx, actor.accountId, keyId, {
      name,
      permissions,
      expiresAt,
      ...restrictions,
      rateLimit,
      quotas,
    });
    await recordAuthChange(tx, actor.accountId);
    return updated;
  });
}

/**
 * Issues a new key with every setting of the old one (quotas and rate limit included: both share a
 * lineage and a bucket), if the account has room for one more usable key; the
 * old key stays valid for 60 more minutes (or until its own expiry, if sooner). A key already
 * rotated is in its grace period until then: rotating it again is KEY_ROTATION_IN_PROGRESS.
 */
export async function rotateKey(
  ctx: Context,
  { actor, keyId, policy = OPERATOR_POLICY }: KeyVerbInput & { keyId: string },
): Promise<{ newKey: IssuedKey; oldKey: ApiKeyRecord }> {
  const { clock } = ctx;
  const now = clock.now();
  return withTransaction(ctx, async ({ tx }) => {
    const mode = await lockAccount(tx, actor.accountId);
    const old = await lockKey(tx, actor.accountId, keyId);
    refuseUnmanageable(actor, old);
    if (old.revokedAt) {
      throw validationError([{ path: 'path.keyId', message: 'key is revoked and cannot be rotated' }]);
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
    if (expired)
      throw validationError([{ path: 'path.keyId', message: 'key has expired and cannot be rotated' }]);
    // The old key stays usable through its grace period, so the new one needs a place of its own.
    await assertRoomForKey(tx, actor.accountId, now);
    // The new key gets the old one's settings and a secret the actor will hold: no looser than the actor.
    refuseLooser(actor, old, policy);

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
      rateLimitBucket: old.rateLimitBucket,
    });
    const graceEnd = new Date(now.getTime() + ROTATION_GRACE_MS);
    const oldExpiry =
      old.expiresAt && old.expiresAt.getTime() < graceEnd.getTime() ? old.expiresAt : graceEnd;
    const oldKey = await markRotated(tx, old.id, newKey.record.id, oldExpiry);
    await recordAuthChange(tx, actor.accountId);
    return { newKey, oldKey };
  });
}

/** Revokes at once; revoking a revoked key changes nothing. */
export async function revokeKey(
  ctx: Context,
  { actor, keyId }: { actor: KeyActor; keyId: string },
): Promise<ApiKeyRecord> {
  return withTransaction(ctx, async ({ tx }) => {
    const key = await lockKey(tx, actor.accountId, keyId);
    refuseUnmanageable(actor, key);
    const revoked = await revokeKeyRow(tx, keyId, ctx.clock.now());
    await recordAuthChange(tx, actor.accountId);
    return revoked;
  });
}
