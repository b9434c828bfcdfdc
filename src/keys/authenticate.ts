import type { AccountMode, AccountStatus } from '../accounts/index.js';
import type { Queryable } from '../db/database.js';
import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { type Cidr, parseCidrList } from '../lib/ip.js';
import { hasQuota, type QuotaLimits } from '../limits/index.js';
import { checkKeyFormat, hashKey } from './format.js';
import { KeyUses } from './last-used.js';
import type { Permission } from './permissions.js';
import { type KeyRow, quotasOf } from './rows.js';
import type { RateLimitSetting } from './settings.js';
import * as sql from './sql.js';
import type { VerificationCache } from './verification-cache.js';

/** What verifying a key needs to know, cached per key hash (time-dependent checks are not cached). */
export interface KeyVerification {
  keyId: string;
  accountId: string;
  /** Null when the key's account no longer exists. */
  accountMode: AccountMode | null;
  accountStatus: AccountStatus | null;
  permissions: ReadonlySet<Permission>;
  expiresAt: Date | null;
  revokedAt: Date | null;
  allowedIps: readonly Cidr[];
  ipRestrictionEnabled: boolean;
  allowedOrigins: readonly string[];
  originRestrictionEnabled: boolean;
  lineageId: string;
  /** The rate-limit bucket the key draws on (shared along its lineage; see rows.ts). */
  rateLimitBucket: string;
  rateLimit: RateLimitSetting;
  quotas: QuotaLimits;
  /** Whether any quota is set (then charges go through the quota path). */
  hasQuota: boolean;
}

/** The authenticated caller of a request. */
export interface Principal {
  keyId: string;
  accountId: string;
  mode: AccountMode;
  permissions: ReadonlySet<Permission>;
  expiresAt: Date | null;
  verification: KeyVerification;
  /**
   * Set when no key calls: the account's owner signed in to the dashboard, using a route served to
   * it as a twin (docs/dashboard.md#market-data). `keyId` is then `session:<id>` — the stream
   * limits count it as a key — and never reaches the ledger (the charge has no key).
   */
  owner?: { sessionId: string };
}

interface AuthRow
  extends Pick<
    KeyRow,
    | 'lineage_id'
    | 'rate_limit_bucket'
    | 'rate_limit_per_second'
    | 'rate_limit_burst'
    | 'quota_daily_requests'
    | 'quota_monthly_requests'
    | 'quota_daily_spend_micros'
    | 'quota_monthly_spend_micros'
  > {
  id: string;
  account_id: string;
  permissions: Permission[];
  expires_at: Date | null;
  revoked_at: Date | null;
  allowed_ips: string[];
  ip_restriction_enabled: boolean;
  allowed_origins: string[];
  origin_restriction_enabled: boolean;
  account_mode: AccountMode | null;
  account_status: AccountStatus | null;
}

function toVerification(row: AuthRow): KeyVerification {
  return {
    keyId: row.id,
    accountId: row.account_id,
    accountMode: row.account_mode,
    accountStatus: row.account_status,
    permissions: new Set(row.permissions),
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    // Stored entries were canonicalised when the key was saved; anything unparsable matches nothing.
    allowedIps: parseCidrList(row.allowed_ips).cidrs,
    ipRestrictionEnabled: row.ip_restriction_enabled,
    allowedOrigins: row.allowed_origins,
    originRestrictionEnabled: row.origin_restriction_enabled,
    lineageId: row.lineage_id,
    rateLimitBucket: row.rate_limit_bucket,
    rateLimit: { perSecond: row.rate_limit_per_second, burst: row.rate_limit_burst },
    quotas: quotasOf(row),
    hasQuota: hasQuota(quotasOf(row)),
  };
}

const BEARER = /^Bearer +(\S+) *$/i;

export class Authenticator {
  constructor(
    private readonly db: Queryable,
    private readonly clock: Clock,
    readonly cache: VerificationCache<KeyVerification | null>,
    /** Told when a key's last use could not be recorded (the request is not). */
    onUseNotRecorded?: (err: unknown) => void,
  ) {
    this.uses = new KeyUses(db, onUseNotRecorded);
  }

  /** When each key was last used; the app waits for its writes when closing. */
  readonly uses: KeyUses;

  /** Verifies `Authorization: Bearer <key>`; throws the matching AppError when it does not pass. */
  async authenticate(authorization: string | undefined): Promise<Principal> {
    if (!authorization) {
      throw new AppError('INVALID_API_KEY', 'Missing API key: send the header Authorization: Bearer <key>');
    }
    const key = BEARER.exec(authorization)?.[1];
    // Format and checksum first: garbage never reaches the cache or the database.
    if (!key || checkKeyFormat(key) === null) {
      throw new AppError('INVALID_API_KEY', 'Malformed API key');
    }
    const hash = hashKey(key);
    const cached = this.cache.get(hash.toString('base64'), async () => {
      const [row] = await this.db.query<AuthRow>(sql.FIND_FOR_AUTH, [hash]);
      return row
        ? { value: toVerification(row), accountId: row.account_id }
        : { value: null, accountId: null };
    });
    const verification = cached instanceof Promise ? await cached : cached;
    if (!verification) throw new AppError('INVALID_API_KEY', 'Unknown API key');
    if (verification.revokedAt) throw new AppError('API_KEY_REVOKED', 'This API key was revoked');
    const now = this.clock.now().getTime();
    if (verification.expiresAt && verification.expiresAt.getTime() <= now) {
      throw new AppError(
        'API_KEY_EXPIRED',
        `This API key expired at ${verification.expiresAt.toISOString()}`,
      );
    }
    if (verification.accountMode === null) {
      throw new AppError('ACCOUNT_NOT_FOUND', 'The account of this API key does not exist');
    }
    if (verification.accountStatus === 'suspended') {
      throw new AppError('ACCOUNT_SUSPENDED', 'The account of this API key is suspended');
    }
    this.uses.seen(verification.keyId, now);
    return {
      keyId: verification.keyId,
      accountId: verification.accountId,
      mode: verification.accountMode,
      permissions: verification.permissions,
      expiresAt: verification.expiresAt,
      verification,
    };
  }
}

export function keyInUrlError(): AppError {
  return new AppError(
    'INVALID_API_KEY',
    'API keys are not accepted in the URL, where logs and browser histories keep them: send the header Authorization: Bearer <key>, and replace this key, which has leaked',
  );
}

export function requirePermission(principal: Principal, permission: Permission): void {
  if (!principal.permissions.has(permission)) {
    throw new AppError('PERMISSION_DENIED', `This API key lacks the "${permission}" permission`, {
      details: { required: permission },
    });
  }
}
