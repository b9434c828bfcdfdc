import {
  type AccountMode,
  createAccount,
  getAccount,
  listAccounts,
  setAccountStatus,
} from '../accounts/accounts.js';
import { presentAccountToOperator } from '../accounts/schemas.js';
import { createContext } from '../context.js';
import type { Database } from '../db/database.js';
import { migrate } from '../db/migrate.js';
import { AppError } from '../errors.js';
import { createKey, revokeKey, updateKey } from '../keys/management.js';
import { isPermission, PERMISSIONS, type Permission } from '../keys/permissions.js';
import type { KeyPolicy } from '../keys/policy.js';
import { type ApiKeyRecord, findKeyAccountId, listKeys } from '../keys/rows.js';
import { presentKey } from '../keys/schemas.js';
import type { KeySettingsInput } from '../keys/settings.js';
import { ENTRY_KINDS, type EntryKind, listTransactions } from '../ledger/history.js';
import { creditDeposit, reconcileLedger, reconciliationView } from '../ledger/ledger.js';
import { systemClock } from '../lib/clock.js';
import { formatUsd, parseUsd } from '../lib/money.js';
import { MIN_PER_SECOND } from '../limits/rate-limiter.js';
import type { SecretBox } from '../webhooks/secret-box.js';
import { type Output, UsageError } from './output.js';

export interface CommandArgs {
  positionals: string[];
  options: Record<string, string | boolean | undefined>;
}

function required(args: CommandArgs, index: number, name: string): string {
  const value = args.positionals[index];
  if (!value) throw new UsageError(`missing ${name}`);
  return value;
}

function option(args: CommandArgs, name: string): string | undefined {
  const value = args.options[name];
  return typeof value === 'string' ? value : undefined;
}

export async function migrateCommand(db: Database, out: Output): Promise<void> {
  const applied = await migrate(db);
  out.result(
    { applied },
    applied.length ? `Applied migrations: ${applied.join(', ')}` : 'Database is up to date',
  );
}

export async function accountsCommand(
  db: Database,
  out: Output,
  action: string,
  args: CommandArgs,
  secrets: SecretBox,
): Promise<void> {
  const ctx = createContext(db, systemClock);
  switch (action) {
    case 'create': {
      const mode = option(args, 'mode') ?? 'live';
      if (mode !== 'live' && mode !== 'sandbox') throw new UsageError('--mode must be live or sandbox');
      const account = await createAccount(
        ctx,
        { mode: mode as AccountMode, walletAddress: option(args, 'wallet') },
        secrets,
      );
      out.result(presentAccountToOperator(account, secrets), `Created ${account.mode} account ${account.id}`);
      return;
    }
    case 'list': {
      const accounts = (await listAccounts(ctx, { limit: 500 })).map((account) => {
        const { webhookSecret: _secret, ...view } = presentAccountToOperator(account, secrets);
        return view;
      });
      out.result(
        { accounts, total: accounts.length },
        accounts.length === 0
          ? 'No accounts'
          : accounts
              .map(
                (a) => `${a.id}  ${a.mode.padEnd(7)} ${a.status.padEnd(9)} ${a.balanceUsd.padStart(12)} USD`,
              )
              .join('\n'),
      );
      return;
    }
    case 'transactions': {
      const accountId = required(args, 0, 'ACCOUNT_ID');
      await getAccount(ctx, accountId);
      const limitText = option(args, 'limit');
      const limit = limitText === undefined ? 50 : Number(limitText);
      if (!Number.isInteger(limit) || limit < 1 || limit > 100)
        throw new UsageError('--limit takes 1 to 100');
      const kind = option(args, 'kind');
      if (kind !== undefined && !(ENTRY_KINDS as readonly string[]).includes(kind)) {
        throw new UsageError(`--kind takes one of ${ENTRY_KINDS.join(', ')}`);
      }
      const page = await listTransactions(ctx, accountId, {
        limit,
        kind: kind as EntryKind | undefined,
        startingAfter: option(args, 'starting-after'),
      });
      out.result(
        page,
        page.transactions.length === 0
          ? 'No transactions'
          : page.transactions
              .map(
                (t) =>
                  `${t.id.padStart(8)}  ${t.createdAt}  ${t.kind.padEnd(10)} ${t.amountUsd.padStart(12)} → ${t.balanceAfterUsd.padStart(12)}  ${t.operation ?? t.reference ?? ''}`,
              )
              .join('\n'),
      );
      return;
    }
    case 'show': {
      const account = await getAccount(ctx, required(args, 0, 'ACCOUNT_ID'));
      const view = presentAccountToOperator(account, secrets);
      out.result(
        view,
        Object.entries(view)
          .map(([k, v]) => `${k.padEnd(14)} ${v ?? '-'}`)
          .join('\n'),
      );
      return;
    }
    case 'credit': {
      const accountId = required(args, 0, 'ACCOUNT_ID');
      const usdText = required(args, 1, 'USD amount');
      const amount = parseUsd(usdText);
      if (amount === null || amount <= 0n)
        throw new UsageError(`"${usdText}" is not a positive USD amount (at most 6 decimals)`);
      const reference = option(args, 'reference');
      if (!reference) throw new UsageError('--reference REF is required (deposits are idempotent on it)');
      const outcome = await creditDeposit(ctx, {
        accountId,
        amountMicros: amount,
        reference,
        memo: option(args, 'memo'),
      });
      out.result(
        {
          accountId,
          reference,
          amountUsd: formatUsd(amount),
          balanceUsd: formatUsd(outcome.balanceMicros),
          duplicate: outcome.duplicate,
          entryId: String(outcome.entryId),
        },
        outcome.duplicate
          ? `Reference ${reference} was already credited; balance ${formatUsd(outcome.balanceMicros)} USD`
          : `Credited ${formatUsd(amount)} USD to ${accountId}; balance ${formatUsd(outcome.balanceMicros)} USD`,
      );
      return;
    }
    case 'suspend':
    case 'activate': {
      const account = await setAccountStatus(ctx, {
        accountId: required(args, 0, 'ACCOUNT_ID'),
        status: action === 'suspend' ? 'suspended' : 'active',
      });
      out.result(presentAccountToOperator(account, secrets), `Account ${account.id} is ${account.status}`);
      return;
    }
    default:
      throw new UsageError(`unknown accounts action "${action}"`);
  }
}

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

export async function ledgerCommand(db: Database, out: Output, action: string): Promise<boolean> {
  if (action !== 'reconcile') throw new UsageError(`unknown ledger action "${action}"`);
  const report = await reconcileLedger(db);
  out.result(
    reconciliationView(report),
    report.ok ? 'Ledger reconciles' : 'LEDGER DOES NOT RECONCILE (run with --json for the details)',
  );
  return report.ok;
}
