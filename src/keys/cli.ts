import { getAccount } from '../accounts/index.js';
import { createContext } from '../context.js';
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import { systemClock } from '../lib/clock.js';
import { type CommandArgs, type Output, option, required, UsageError } from '../lib/command-line.js';
import { MIN_PER_SECOND } from '../limits/index.js';
import { createKey, revokeKey, updateKey } from './management.js';
import { isPermission, PERMISSIONS, type Permission } from './permissions.js';
import type { KeyPolicy } from './policy.js';
import { type ApiKeyRecord, findKeyAccountId, listKeys } from './rows.js';
import { presentKey } from './schemas.js';
import type { KeySettingsInput } from './settings.js';

/** What the operator may give a key: any rate limit up to the configured ceiling. */
export type OperatorKeyPolicy = KeyPolicy;

function permissionsOption(args: CommandArgs): Permission[] | undefined {
  const permissionText = option(args, 'permissions');
  if (permissionText === undefined) return undefined;
  const names = permissionText
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  const unknown = names.filter((p) => !isPermission(p));
  if (unknown.length > 0 || names.length === 0) {
    throw new UsageError(`--permissions takes a comma-separated subset of: ${PERMISSIONS.join(', ')}`);
  }
  return names as Permission[];
}

/** `--rate-limit N --burst M` (both), `--rate-limit default`, or neither. */
function rateLimitOption(args: CommandArgs): KeySettingsInput['rateLimit'] {
  const rate = option(args, 'rate-limit');
  const burst = option(args, 'burst');
  if (rate === undefined && burst === undefined) return undefined;
  if (rate === 'default' && burst === undefined) return null;
  const requestsPerSecond = Number(rate);
  const burstSize = Number(burst);
  if (
    rate === undefined ||
    burst === undefined ||
    !Number.isFinite(requestsPerSecond) ||
    requestsPerSecond < MIN_PER_SECOND ||
    !Number.isSafeInteger(burstSize) ||
    burstSize < 1
  ) {
    throw new UsageError(
      `--rate-limit (requests per second, at least ${MIN_PER_SECOND}) and --burst (a whole number, at least 1) go together; --rate-limit default restores the service default`,
    );
  }
  return { requestsPerSecond, burst: burstSize };
}

/** The operator acting on an account's keys: every permission, no expiry of its own. */
function operatorOf(accountId: string) {
  return { accountId, permissions: PERMISSIONS, expiresAt: null };
}

function presentForOperator(record: ApiKeyRecord, policy: KeyPolicy) {
  const { usage: _usage, ...key } = presentKey(record, systemClock.now(), {
    defaultRateLimit: policy.defaultRateLimit,
  });
  return { ...key, accountId: record.accountId };
}

/**
 * `keys create` and `keys update`: the operator is bounded by no key, only by the configured
 * ceilings, so this is how a key gets a rate limit above the default.
 */
export async function keysCommand(
  db: Database,
  out: Output,
  action: string,
  args: CommandArgs,
  policy: OperatorKeyPolicy,
): Promise<void> {
  switch (action) {
    case 'create': {
      const accountId = required(args, 0, 'ACCOUNT_ID');
      const issued = await createKey(createContext(db, systemClock), {
        actor: operatorOf(accountId),
        settings: {
          name: option(args, 'name') ?? 'operator key',
          permissions: permissionsOption(args),
          expiresAt: option(args, 'expires-at'),
          rateLimit: rateLimitOption(args),
        },
        policy,
      });
      out.result(
        { ...presentForOperator(issued.record, policy), key: issued.key },
        `Created key ${issued.record.id} for ${accountId} (shown once):\n${issued.key}`,
      );
      return;
    }
    case 'update': {
      const keyId = required(args, 0, 'KEY_ID');
      const expiresText = option(args, 'expires-at');
      const input: KeySettingsInput = {
        name: option(args, 'name'),
        permissions: permissionsOption(args),
        expiresAt: expiresText === 'never' ? null : expiresText,
        rateLimit: rateLimitOption(args),
      };
      if (Object.values(input).every((v) => v === undefined)) {
        throw new UsageError(
          'keys update needs at least one of --name, --permissions, --expires-at, --rate-limit',
        );
      }
      const accountId = await findKeyAccountId(db, keyId);
      if (accountId === null) throw new AppError('NOT_FOUND', `Key ${keyId} not found`);
      const updated = await updateKey(createContext(db, systemClock), {
        actor: operatorOf(accountId),
        keyId,
        settings: input,
        policy,
      });
      out.result(presentForOperator(updated, policy), `Updated key ${keyId} of ${accountId}`);
      return;
    }
    case 'list': {
      const accountId = required(args, 0, 'ACCOUNT_ID');
      await getAccount(createContext(db, systemClock), accountId); // NOT_FOUND for an unknown account
      const keys = (await listKeys(db, accountId)).map((record) => presentForOperator(record, policy));
      out.result(
        { keys, total: keys.length },
        keys.length === 0
          ? `No keys for ${accountId}`
          : keys
              .map(
                (k) =>
                  `${k.id}  ${(k.revokedAt ? 'revoked' : k.isActive ? 'active' : 'inactive').padEnd(8)} ${k.keyPrefix}…  ${k.name}`,
              )
              .join('\n'),
      );
      return;
    }
    case 'revoke': {
      const keyId = required(args, 0, 'KEY_ID');
      const accountId = await findKeyAccountId(db, keyId);
      if (accountId === null) throw new AppError('NOT_FOUND', `Key ${keyId} not found`);
      const revoked = await revokeKey(createContext(db, systemClock), {
        actor: operatorOf(accountId),
        keyId,
      });
      out.result(presentForOperator(revoked, policy), `Revoked key ${keyId} of ${accountId}`);
      return;
    }
    default:
      throw new UsageError(`unknown keys action "${action}"`);
  }
}
