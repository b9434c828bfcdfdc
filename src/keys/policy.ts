import { MAX_ACTIVE_KEYS } from '../accounts/index.js';
import type { Queryable } from '../db/database.js';
import { AppError } from '../errors.js';
import type { RateLimitPolicy } from '../limits/index.js';
import { type ActorBounds, type BoundedCandidate, looserThan } from './bounds.js';
import { PERMISSIONS, type Permission } from './permissions.js';
import { type ApiKeyRecord, countActiveKeys } from './rows.js';
import type { LimitCeilings } from './settings.js';

export { MAX_ACTIVE_KEYS };
export const ROTATION_GRACE_MS = 60 * 60 * 1000;

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

/** What the operator allows a key to be given. */
export interface KeyPolicy {
  ceilings: LimitCeilings;
  /** The rate limit of keys that set none. */
  defaultRateLimit: RateLimitPolicy;
}

/**
 * The account's owner: the operator on the command line, or the wallet signed in to the dashboard.
 * Every permission, no expiry, no bounds: only the account's own rules (25 keys, rotation) apply.
 */
export function accountOwner(accountId: string): KeyActor {
  return { accountId, permissions: PERMISSIONS, expiresAt: null };
}

export const OPERATOR_POLICY: KeyPolicy = {
  ceilings: { maxPerSecond: Number.MAX_SAFE_INTEGER, maxBurst: Number.MAX_SAFE_INTEGER },
  defaultRateLimit: { perSecond: Number.MAX_SAFE_INTEGER, burst: Number.MAX_SAFE_INTEGER },
};

/**
 * Refuses a key that would be looser than the actor making it: a later expiry (or none, under an
 * expiring actor), and, for an API key, wider lists, a higher rate, higher quotas, or other
 * counters (bounds.ts).
 */
export function refuseLooser(
  actor: KeyActor,
  candidate: BoundedCandidate & { expiresAt: Date | null },
  policy: KeyPolicy,
): void {
  const looser = actor.bounds ? looserThan(actor.bounds, candidate, policy.defaultRateLimit) : [];
  if (outlives(candidate.expiresAt, actor.expiresAt)) looser.push('expiresAt');
  if (looser.length > 0) {
    throw new AppError(
      'PERMISSION_DENIED',
      `A key cannot give a key looser limits than its own: ${looser.join(', ')}`,
      { details: { looser } },
    );
  }
}

function outlives(expiresAt: Date | null, actorExpiresAt: Date | null): boolean {
  return actorExpiresAt !== null && (expiresAt === null || expiresAt.getTime() > actorExpiresAt.getTime());
}

/** A key may not grant a permission it lacks itself. */
export function refuseWiderPermissions(actor: KeyActor, permissions: readonly Permission[]): void {
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
}

function beyondActor(actor: KeyActor, permissions: readonly Permission[]): Permission[] {
  return permissions.filter((p) => !actor.permissions.includes(p));
}

/**
 * A key may only change, rotate or revoke keys that have no permission it lacks itself (or it could
 * escalate) and that do not outlive it (or an expiring key, such as one in its rotation grace
 * period, could loosen or take over the keys that replace it).
 */
export function refuseUnmanageable(actor: KeyActor, key: ApiKeyRecord): void {
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
  if (outlives(key.expiresAt, actor.expiresAt)) {
    throw new AppError('PERMISSION_DENIED', 'A key cannot manage a key that outlives it', {
      details: { looser: ['expiresAt'] },
    });
  }
}

/** Call with the account row locked, so the count cannot be raced past the cap. */
export async function assertRoomForKey(tx: Queryable, accountId: string, now: Date): Promise<void> {
  if ((await countActiveKeys(tx, accountId, now)) >= MAX_ACTIVE_KEYS) {
    throw new AppError('MAX_KEYS_EXCEEDED', `An account can hold at most ${MAX_ACTIVE_KEYS} active keys`, {
      details: { maxKeys: MAX_ACTIVE_KEYS },
    });
  }
}
