import { PERMISSIONS, type Principal } from '../keys/index.js';
import { NO_QUOTAS } from '../limits/index.js';

/**
 * The caller of a paid route's twin (docs/dashboard.md#market-data): the account's owner, signed in
 * to the dashboard — every permission, no key's restrictions, rate limit or quotas (as the owner on
 * the command line). Its charges are the account's, booked without a key (`owner` set); its streams
 * count against the per-key limit as `session:<id>`, against the account's and the address's as
 * any stream's.
 */
export function ownerPrincipal(call: {
  accountId: string;
  mode: Principal['mode'];
  sessionId: string;
}): Principal {
  const keyId = `session:${call.sessionId}`;
  const permissions = new Set(PERMISSIONS);
  return {
    keyId,
    accountId: call.accountId,
    mode: call.mode,
    permissions,
    expiresAt: null,
    owner: { sessionId: call.sessionId },
    verification: {
      keyId,
      accountId: call.accountId,
      accountMode: call.mode,
      accountStatus: 'active',
      permissions,
      expiresAt: null,
      revokedAt: null,
      allowedIps: [],
      ipRestrictionEnabled: false,
      allowedOrigins: [],
      originRestrictionEnabled: false,
      lineageId: keyId,
      rateLimitBucket: keyId,
      rateLimit: { perSecond: null, burst: null },
      quotas: NO_QUOTAS,
      hasQuota: false,
    },
  };
}
