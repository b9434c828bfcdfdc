import { statement } from '../db/database.js';
import { pruneStatement } from '../db/prune.js';

const KEY_COLUMNS = `id, account_id, key_prefix, name, permissions, expires_at, revoked_at, allowed_ips,
  ip_restriction_enabled, allowed_origins, origin_restriction_enabled, rotated_to, rotated_from, created_at,
  lineage_id, rate_limit_bucket, rate_limit_per_second, rate_limit_burst, quota_daily_requests,
  quota_monthly_requests, quota_daily_spend_micros, quota_monthly_spend_micros, last_used_at`;

// The hot path of every authenticated request on a cache miss: one indexed lookup by hash.
export const FIND_FOR_AUTH = statement(
  'keys_find_for_auth',
  `SELECT k.id, k.account_id, k.permissions, k.expires_at, k.revoked_at, k.allowed_ips,
          k.ip_restriction_enabled, k.allowed_origins, k.origin_restriction_enabled,
          k.lineage_id, k.rate_limit_bucket, k.rate_limit_per_second, k.rate_limit_burst, k.quota_daily_requests,
          k.quota_monthly_requests, k.quota_daily_spend_micros, k.quota_monthly_spend_micros,
          a.mode AS account_mode, a.status AS account_status
     FROM api_keys k LEFT JOIN accounts a ON a.id = k.account_id
    WHERE k.key_hash = $1`,
);

// Serialises key creation per account so the active-key count cannot be raced past the maximum.
export const LOCK_ACCOUNT = 'SELECT mode FROM accounts WHERE id = $1 FOR UPDATE';

// Every usable key counts, those in a rotation grace period included: otherwise a chain of
// rotations would hold any number of usable keys.
export const COUNT_ACTIVE = `
  SELECT count(*) AS n FROM api_keys
   WHERE account_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)`;

export const INSERT_KEY = `
  INSERT INTO api_keys (id, account_id, key_hash, key_prefix, name, permissions, expires_at, allowed_ips,
                        ip_restriction_enabled, allowed_origins, origin_restriction_enabled, rotated_from, created_at,
                        lineage_id, rate_limit_per_second, rate_limit_burst, quota_daily_requests,
                        quota_monthly_requests, quota_daily_spend_micros, quota_monthly_spend_micros,
                        rate_limit_bucket)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, COALESCE($14, $1), $15, $16, $17, $18, $19, $20,
          COALESCE($21, $1))
  RETURNING ${KEY_COLUMNS}`;

export const UPDATE_KEY = `
  UPDATE api_keys
     SET name = $3, permissions = $4, expires_at = $5, allowed_ips = $6, ip_restriction_enabled = $7,
         allowed_origins = $8, origin_restriction_enabled = $9, rate_limit_per_second = $10, rate_limit_burst = $11,
         quota_daily_requests = $12, quota_monthly_requests = $13, quota_daily_spend_micros = $14,
         quota_monthly_spend_micros = $15
   WHERE id = $1 AND account_id = $2
  RETURNING ${KEY_COLUMNS}`;

export const SELECT_KEY_FOR_UPDATE = `SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1 AND account_id = $2 FOR UPDATE`;

export const MARK_ROTATED = `
  UPDATE api_keys SET rotated_to = $2, expires_at = $3 WHERE id = $1
  RETURNING ${KEY_COLUMNS}`;

export const REVOKE_KEY = `
  UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1
  RETURNING ${KEY_COLUMNS}`;

// Never moves the time back: instances write on their own minute, in any order.
export const TOUCH_LAST_USED = statement(
  'keys_touch_last_used',
  `UPDATE api_keys SET last_used_at = $2
    WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2)`,
);

export const FIND_KEY_ACCOUNT = 'SELECT account_id FROM api_keys WHERE id = $1';

/** The names of the account's ($1) keys among $2: the ledger's usage report by key. */
export const KEY_NAMES = 'SELECT id, name FROM api_keys WHERE account_id = $1 AND id = ANY ($2::text[])';

export const LIST_KEYS = `
  SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY created_at DESC, id`;

export const RECORD_AUTH_CHANGE = 'INSERT INTO auth_changes (account_id) VALUES ($1)';

/** The revocation feed is only read over a trailing window of seconds; a day of it is plenty. */
export const AUTH_CHANGES_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * Retention: deletes up to $2 feed rows written before $1; returns how many. Reads
 * auth_changes_created; its shape is `pruneStatement`'s (db/prune.ts).
 */
export const PRUNE_AUTH_CHANGES = pruneStatement({
  name: 'keys_prune_auth_changes',
  table: 'auth_changes',
  key: 'id',
  ended: 'created_at < $1',
  orderBy: 'created_at',
});

/**
 * Keys that expire within the next 7 days ($1 now, $2 now + 7 days): live ones, not rotated (a
 * rotated key's expiry is its grace period, announced by the rotation itself), with their account's mode.
 */
export const EXPIRING = statement(
  'keys_expiring',
  `SELECT k.id, k.account_id, a.mode, k.name, k.expires_at
     FROM api_keys k JOIN accounts a ON a.id = k.account_id
    WHERE k.revoked_at IS NULL AND k.rotated_to IS NULL AND k.expires_at > $1 AND k.expires_at <= $2
    ORDER BY k.expires_at, k.id`,
);
