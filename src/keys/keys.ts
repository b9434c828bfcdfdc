import type { AccountMode } from '../accounts/accounts.js';
import type { Database, Queryable } from '../db/database.js';
import { AppError, type ValidationProblem, validationError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import { generateKey } from './format.js';
import type { Permission } from './permissions.js';
import { type KeySettingsInput, resolveExpiry, resolveRestrictions } from './settings.js';
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
}

interface KeyRow {
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
  };
}

export function isKeyActive(key: ApiKeyRecord, now: Date): boolean {
  return key.revokedAt === null && (key.expiresAt === null || key.expiresAt.getTime() > now.getTime());
}

/** Who asks for a key: an API key of the account, or the operator (CLI), who is unbounded. */
export interface KeyActor {
  accountId: string;
  /** The creator's permissions; a new key can have no more. */
  permissions: readonly Permission[];
  /** The creator's own expiry; a new key may not outlive it. */
  expiresAt: Date | null;
}

export interface IssuedKey {
  record: ApiKeyRecord;
  /** The full secret, shown once. */
  key: string;
}

async function insertKey(
  tx: Queryable,
  clock: Clock,
  mode: AccountMode,
  accountId: string,
  settings: Omit<ApiKeyRecord, 'id' | 'accountId' | 'keyPrefix' | 'revokedAt' | 'rotatedTo' | 'createdAt'>,
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
  ]);
  return { record: toRecord(row as KeyRow), key: generated.key };
}

async function lockAccount(tx: Queryable, accountId: string): Promise<AccountMode> {
  const [account] = await tx.query<{ mode: AccountMode }>(sql.LOCK_ACCOUNT, [accountId]);
  if (!account) throw new AppError('ACCOUNT_NOT_FOUND', `Account ${accountId} does not exist`);
  return account.mode;
}

export async function createKey(
  db: Database,
  clock: Clock,
  actor: KeyActor,
  input: KeySettingsInput & { name: string },
): Promise<IssuedKey> {
  const now = clock.now();
  const problems: ValidationProblem[] = [];
  const name = input.name.trim();
  if (name.length === 0) problems.push({ path: 'name', message: 'must not be blank' });
  const permissions = [...new Set(input.permissions ?? actor.permissions)];
  const beyond = permissions.filter((p) => !actor.permissions.includes(p));
  let expiresAt = resolveExpiry(input.expiresAt, now, problems) ?? actor.expiresAt;
  if (actor.expiresAt && expiresAt && expiresAt.getTime() > actor.expiresAt.getTime()) {
    problems.push({ path: 'expiresAt', message: 'cannot be later than the expiry of the key creating it' });
    expiresAt = actor.expiresAt;
  }
  const restrictions = resolveRestrictions(
    input,
    { allowedIps: [], ipRestrictionEnabled: false, allowedOrigins: [], originRestrictionEnabled: false },
    problems,
  );
  if (problems.length > 0) throw validationError(problems);
  if (beyond.length > 0) {
    throw new AppError(
      'PERMISSION_DENIED',
      `A key cannot grant permissions its creator lacks: ${beyond.join(', ')}`,
      {
        details: { permissions: beyond },
      },
    );
  }

  return db.transaction(async (tx) => {
    const mode = await lockAccount(tx, actor.accountId);
    const [count] = await tx.query<{ n: bigint }>(sql.COUNT_ACTIVE, [actor.accountId, now]);
    if (Number(count?.n ?? 0) >= MAX_ACTIVE_KEYS) {
      throw new AppError('MAX_KEYS_EXCEEDED', `An account can hold at most ${MAX_ACTIVE_KEYS} active keys`, {
        details: { maxKeys: MAX_ACTIVE_KEYS },
      });
    }
    return insertKey(tx, clock, mode, actor.accountId, {
      name,
      permissions,
      expiresAt: expiresAt ?? null,
      ...restrictions,
      rotatedFrom: null,
    });
  });
}

/**
 * Issues a new key with every setting of the old one; the old key stays valid for 60 more minutes
 * (or until its own expiry, if sooner). A key already rotated is in its grace period until then:
 * rotating it again is KEY_ROTATION_IN_PROGRESS.
 */
export async function rotateKey(
  db: Database,
  clock: Clock,
  accountId: string,
  keyId: string,
): Promise<{ newKey: IssuedKey; oldKey: ApiKeyRecord }> {
  const now = clock.now();
  return db.transaction(async (tx) => {
    const mode = await lockAccount(tx, accountId);
    const [row] = await tx.query<KeyRow>(sql.SELECT_KEY_FOR_UPDATE, [keyId, accountId]);
    if (!row) throw new AppError('NOT_FOUND', `Key ${keyId} not found`);
    const old = toRecord(row);
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

    const newKey = await insertKey(tx, clock, mode, accountId, {
      name: old.name,
      permissions: old.permissions,
      expiresAt: old.expiresAt,
      allowedIps: old.allowedIps,
      ipRestrictionEnabled: old.ipRestrictionEnabled,
      allowedOrigins: old.allowedOrigins,
      originRestrictionEnabled: old.originRestrictionEnabled,
      rotatedFrom: old.id,
    });
    const graceEnd = new Date(now.getTime() + ROTATION_GRACE_MS);
    const oldExpiry =
      old.expiresAt && old.expiresAt.getTime() < graceEnd.getTime() ? old.expiresAt : graceEnd;
    const [updated] = await tx.query<KeyRow>(sql.MARK_ROTATED, [old.id, newKey.record.id, oldExpiry]);
    await tx.query(sql.RECORD_AUTH_CHANGE, [accountId]);
    return { newKey, oldKey: toRecord(updated as KeyRow) };
  });
}

/** Revokes at once; revoking a revoked key changes nothing. */
export async function revokeKey(
  db: Database,
  clock: Clock,
  accountId: string,
  keyId: string,
): Promise<ApiKeyRecord> {
  return db.transaction(async (tx) => {
    const [row] = await tx.query<KeyRow>(sql.REVOKE_KEY, [keyId, accountId, clock.now()]);
    if (!row) throw new AppError('NOT_FOUND', `Key ${keyId} not found`);
    await tx.query(sql.RECORD_AUTH_CHANGE, [accountId]);
    return toRecord(row);
  });
}

export async function listKeys(db: Queryable, accountId: string): Promise<ApiKeyRecord[]> {
  const rows = await db.query<KeyRow>(sql.LIST_KEYS, [accountId]);
  return rows.map(toRecord);
}
