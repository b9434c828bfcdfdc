import type { AccountMode } from '../accounts/index.js';
import type { Queryable } from '../db/database.js';
import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import type { QuotaLimits } from '../limits/index.js';
import { generateKey } from './format.js';
import type { Permission } from './permissions.js';
import type { RateLimitSetting } from './settings.js';
import * as sql from './sql.js';

/** A stored key as the domain sees it (never its secret, which is not stored). */
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
  /**
   * The rate-limit bucket it draws on: shared with the keys rotated from it, and with the key that
   * created it when that key has a rate limit of its own.
   */
  rateLimitBucket: string;
  rateLimit: RateLimitSetting;
  quotas: QuotaLimits;
  /** When it last authenticated a request, to the minute (./last-used.ts); null: never. */
  lastUsedAt: Date | null;
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
  rate_limit_bucket: string;
  rate_limit_per_second: number | null;
  rate_limit_burst: number | null;
  quota_daily_requests: bigint | null;
  quota_monthly_requests: bigint | null;
  quota_daily_spend_micros: bigint | null;
  quota_monthly_spend_micros: bigint | null;
  last_used_at: Date | null;
}

export function quotasOf(row: Pick<KeyRow, `quota_${string}` & keyof KeyRow>): QuotaLimits {
  return {
    dailyRequests: row.quota_daily_requests,
    monthlyRequests: row.quota_monthly_requests,
    dailySpendMicros: row.quota_daily_spend_micros,
    monthlySpendMicros: row.quota_monthly_spend_micros,
  };
}

export function toRecord(row: KeyRow): ApiKeyRecord {
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
    rateLimitBucket: row.rate_limit_bucket,
    rateLimit: { perSecond: row.rate_limit_per_second, burst: row.rate_limit_burst },
    quotas: quotasOf(row),
    lastUsedAt: row.last_used_at,
  };
}

export function isKeyActive(key: ApiKeyRecord, now: Date): boolean {
  return key.revokedAt === null && (key.expiresAt === null || key.expiresAt.getTime() > now.getTime());
}

export interface IssuedKey {
  record: ApiKeyRecord;
  /** The full secret, shown once. */
  key: string;
}

export type NewKeySettings = Omit<
  ApiKeyRecord,
  | 'id'
  | 'accountId'
  | 'keyPrefix'
  | 'revokedAt'
  | 'rotatedTo'
  | 'createdAt'
  | 'lineageId'
  | 'rateLimitBucket'
  | 'lastUsedAt'
> & {
  /** Null: a lineage of its own. */
  lineageId: string | null;
  /** Null: a bucket of its own. */
  rateLimitBucket: string | null;
};

export async function insertKey(
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
    settings.rateLimitBucket,
  ]);
  return { record: toRecord(row as KeyRow), key: generated.key };
}

/** Locks the account row (one lock order for every key change) and answers its mode. */
export async function lockAccount(tx: Queryable, accountId: string): Promise<AccountMode> {
  const [account] = await tx.query<{ mode: AccountMode }>(sql.LOCK_ACCOUNT, [accountId]);
  if (!account) throw new AppError('ACCOUNT_NOT_FOUND', `Account ${accountId} does not exist`);
  return account.mode;
}

export async function countActiveKeys(tx: Queryable, accountId: string, now: Date): Promise<number> {
  const [count] = await tx.query<{ n: bigint }>(sql.COUNT_ACTIVE, [accountId, now]);
  return Number(count?.n ?? 0);
}

/** The key, locked for the rest of the transaction; NOT_FOUND when the account has no such key. */
export async function lockKey(tx: Queryable, accountId: string, keyId: string): Promise<ApiKeyRecord> {
  const [row] = await tx.query<KeyRow>(sql.SELECT_KEY_FOR_UPDATE, [keyId, accountId]);
  if (!row) throw new AppError('NOT_FOUND', `Key ${keyId} not found`);
  return toRecord(row);
}

export type KeyUpdate = Pick<
  ApiKeyRecord,
  | 'name'
  | 'permissions'
  | 'expiresAt'
  | 'allowedIps'
  | 'ipRestrictionEnabled'
  | 'allowedOrigins'
  | 'originRestrictionEnabled'
  | 'rateLimit'
  | 'quotas'
>;

export async function updateKeyRow(
  tx: Queryable,
  accountId: string,
  keyId: string,
  settings: KeyUpdate,
): Promise<ApiKeyRecord> {
  const [row] = await tx.query<KeyRow>(sql.UPDATE_KEY, [
    keyId,
    accountId,
    settings.name,
    settings.permissions,
    settings.expiresAt,
    settings.allowedIps,
    settings.ipRestrictionEnabled,
    settings.allowedOrigins,
    settings.originRestrictionEnabled,
    settings.rateLimit.perSecond,
    settings.rateLimit.burst,
    settings.quotas.dailyRequests,
    settings.quotas.monthlyRequests,
    settings.quotas.dailySpendMicros,
    settings.quotas.monthlySpendMicros,
  ]);
  return toRecord(row as KeyRow);
}

export async function markRotated(
  tx: Queryable,
  keyId: string,
  newKeyId: string,
  graceEnd: Date,
): Promise<ApiKeyRecord> {
  const [row] = await tx.query<KeyRow>(sql.MARK_ROTATED, [keyId, newKeyId, graceEnd]);
  return toRecord(row as KeyRow);
}

export async function revokeKeyRow(tx: Queryable, keyId: string, now: Date): Promise<ApiKeyRecord> {
  const [row] = await tx.query<KeyRow>(sql.REVOKE_KEY, [keyId, now]);
  return toRecord(row as KeyRow);
}

/** Every instance's verification cache drops the account's keys when it reads this. */
export async function recordAuthChange(tx: Queryable, accountId: string): Promise<void> {
  await tx.query(sql.RECORD_AUTH_CHANGE, [accountId]);
}

/** The account a key belongs to, or null when there is no such key (the operator's look-up). */
export async function findKeyAccountId(db: Queryable, keyId: string): Promise<string | null> {
  const [row] = await db.query<{ account_id: string }>(sql.FIND_KEY_ACCOUNT, [keyId]);
  return row?.account_id ?? null;
}

export async function listKeys(db: Queryable, accountId: string): Promise<ApiKeyRecord[]> {
  const rows = await db.query<KeyRow>(sql.LIST_KEYS, [accountId]);
  return rows.map(toRecord);
}
