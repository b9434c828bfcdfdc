import { createContext } from '../context.js';
import type { Database } from '../db/database.js';
import { creditDeposit, ENTRY_KINDS, type EntryKind, listTransactions } from '../ledger/index.js';
import { systemClock } from '../lib/clock.js';
import { type CommandArgs, type Output, option, required, UsageError } from '../lib/command-line.js';
import { formatUsd, parseUsd } from '../lib/money.js';
import { type SecretBox, webhookSecretOf } from '../webhooks/index.js';
import { type AccountMode, createAccount, getAccount, listAccounts, setAccountStatus } from './accounts.js';
import { adjustCommand } from './adjust-cli.js';
import { presentAccountToOperator } from './schemas.js';

/**
 * `sibyl accounts create|list|show|transactions|credit|adjust|suspend|activate`: the operator's view of
 * accounts, with their webhook secret.
 */
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
      out.result(
        presentAccountToOperator(account, await webhookSecretOf(ctx, secrets, account.id)),
        `Created ${account.mode} account ${account.id}`,
      );
      return;
    }
    case 'list': {
      const accounts = (await listAccounts(ctx, { limit: 500 })).map((account) => {
        return presentAccountToOperator(account);
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
      const view = presentAccountToOperator(account, await webhookSecretOf(ctx, secrets, account.id));
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
      // The watcher's own references: one taken here first would stop it crediting that chunk.
      if (reference.startsWith('sol:'))
        throw new UsageError(
          `references sol:… are the deposit watcher's; a chain deposit it left unattributed or held is credited with \`sibyl deposits assign SIGNATURE ACCOUNT_ID\``,
        );
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
    case 'adjust':
      return adjustCommand(ctx, out, args);
    case 'suspend':
    case 'activate': {
      const account = await setAccountStatus(ctx, {
        accountId: required(args, 0, 'ACCOUNT_ID'),
        status: action === 'suspend' ? 'suspended' : 'active',
      });
      out.result(
        presentAccountToOperator(account, await webhookSecretOf(ctx, secrets, account.id)),
        `Account ${account.id} is ${account.status}`,
      );
      return;
    }
    default:
      throw new UsageError(`unknown accounts action "${action}"`);
  }
}
