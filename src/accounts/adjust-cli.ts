import type { Context } from '../context.js';
import { AppError } from '../errors.js';
import { adjustBalance, getBalance } from '../ledger/index.js';
import { type CommandArgs, type Output, UsageError } from '../lib/command-line.js';
import { formatUsd, parseUsd } from '../lib/money.js';

/** The longest `--reason` kept on the entry (its memo). */
export const MAX_REASON_CHARS = 500;

/** A signed USD amount: "+5.00", "-0.25", "12" (at most 6 decimals, never zero). */
export function parseSignedUsd(text: string): bigint | null {
  const negative = text.startsWith('-');
  const magnitude = parseUsd(negative || text.startsWith('+') ? text.slice(1) : text);
  if (magnitude === null || magnitude === 0n) return null;
  return negative ? -magnitude : magnitude;
}

/**
 * `sibyl accounts adjust ACCOUNT_ID ±USD --reason TEXT`: an operator's correction (a mistaken
 * credit taken back, a goodwill credit) as an `adjustment` entry carrying the reason. One guarded
 * statement with the balance, like every movement (the ledger's ADJUST statement): it serialises with
 * concurrent charges on the account's row, and never takes the balance below zero — refused, with
 * nothing written, when it would.
 */
export async function adjustCommand(ctx: Context, out: Output, args: CommandArgs): Promise<void> {
  const [accountId, usdText] = args.positionals;
  if (!accountId) throw new UsageError('missing ACCOUNT_ID');
  if (!usdText) throw new UsageError('missing ±USD amount (e.g. -25.00 or +5.00)');
  const amount = parseSignedUsd(usdText);
  if (amount === null)
    throw new UsageError(
      `"${usdText}" is not a non-zero signed USD amount (e.g. -25.00, +5.00; at most 6 decimals)`,
    );
  const reasonOption = args.options.reason;
  const reason = typeof reasonOption === 'string' ? reasonOption.trim() : '';
  if (reason === '') throw new UsageError('--reason TEXT is required (it is kept on the ledger entry)');
  if (reason.length > MAX_REASON_CHARS)
    throw new UsageError(`--reason takes at most ${MAX_REASON_CHARS} characters`);
  let outcome: { entryId: bigint; balanceMicros: bigint };
  try {
    outcome = await adjustBalance(ctx, { accountId, amountMicros: amount, memo: reason });
  } catch (err) {
    if (err instanceof AppError && err.code === 'INSUFFICIENT_BALANCE') {
      const balance = await getBalance(ctx, accountId);
      throw new AppError(
        'INSUFFICIENT_BALANCE',
        `Refused: ${formatUsd(amount)} USD would take the balance of ${accountId} below zero ` +
          `(it is ${formatUsd(balance)} USD now); nothing was written`,
        { details: { balanceUsd: formatUsd(balance), amountUsd: formatUsd(amount) } },
      );
    }
    throw err;
  }
  out.result(
    {
      accountId,
      amountUsd: formatUsd(amount),
      balanceUsd: formatUsd(outcome.balanceMicros),
      entryId: String(outcome.entryId),
      kind: 'adjustment',
      reason,
    },
    `Adjusted ${accountId} by ${amount > 0n ? '+' : ''}${formatUsd(amount)} USD (entry ${outcome.entryId}); ` +
      `balance ${formatUsd(outcome.balanceMicros)} USD`,
  );
}
