import { type AccountMode, createAccount, getAccount, setAccountStatus } from '../accounts/accounts.js';
import type { Database } from '../db/database.js';
import { migrate } from '../db/migrate.js';
import { createKey } from '../keys/keys.js';
import { isPermission, PERMISSIONS, type Permission } from '../keys/permissions.js';
import { creditDeposit, reconcileLedger, reconciliationView } from '../ledger/ledger.js';
import { systemClock } from '../lib/clock.js';
import { formatUsd, parseUsd } from '../lib/money.js';
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

function presentAccount(account: Awaited<ReturnType<typeof getAccount>>) {
  return {
    accountId: account.id,
    mode: account.mode,
    status: account.status,
    walletAddress: account.walletAddress,
    balanceUsd: formatUsd(account.balanceMicros),
    webhookSecret: account.webhookSecret,
    createdAt: account.createdAt.toISOString(),
  };
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
): Promise<void> {
  switch (action) {
    case 'create': {
      const mode = option(args, 'mode') ?? 'live';
      if (mode !== 'live' && mode !== 'sandbox') throw new UsageError('--mode must be live or sandbox');
      const account = await createAccount(db, systemClock, {
        mode: mode as AccountMode,
        walletAddress: option(args, 'wallet'),
      });
      out.result(presentAccount(account), `Created ${account.mode} account ${account.id}`);
      return;
    }
    case 'show': {
      const account = await getAccount(db, required(args, 0, 'ACCOUNT_ID'));
      const view = presentAccount(account);
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
      const outcome = await creditDeposit(db, {
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
      const account = await setAccountStatus(
        db,
        required(args, 0, 'ACCOUNT_ID'),
        action === 'suspend' ? 'suspended' : 'active',
      );
      out.result(presentAccount(account), `Account ${account.id} is ${account.status}`);
      return;
    }
    default:
      throw new UsageError(`unknown accounts action "${action}"`);
  }
}

export async function keysCommand(
  db: Database,
  out: Output,
  action: string,
  args: CommandArgs,
): Promise<void> {
  if (action !== 'create') throw new UsageError(`unknown keys action "${action}"`);
  const accountId = required(args, 0, 'ACCOUNT_ID');
  const permissionText = option(args, 'permissions');
  let permissions: Permission[] | undefined;
  if (permissionText !== undefined) {
    const names = permissionText
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean);
    const unknown = names.filter((p) => !isPermission(p));
    if (unknown.length > 0 || names.length === 0) {
      throw new UsageError(`--permissions takes a comma-separated subset of: ${PERMISSIONS.join(', ')}`);
    }
    permissions = names as Permission[];
  }
  const issued = await createKey(
    db,
    systemClock,
    { accountId, permissions: PERMISSIONS, expiresAt: null },
    { name: option(args, 'name') ?? 'operator key', permissions, expiresAt: option(args, 'expires-at') },
  );
  out.result(
    {
      id: issued.record.id,
      key: issued.key,
      keyPrefix: issued.record.keyPrefix,
      accountId,
      name: issued.record.name,
      permissions: issued.record.permissions,
      expiresAt: issued.record.expiresAt?.toISOString() ?? null,
    },
    `Created key ${issued.record.id} for ${accountId} (shown once):\n${issued.key}`,
  );
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
