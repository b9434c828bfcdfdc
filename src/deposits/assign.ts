import { getAccount } from '../accounts/index.js';
import { type Context, withTransaction } from '../context.js';
import { AppError } from '../errors.js';
import { creditDeposits } from '../ledger/index.js';
import { announceCredits, depositMemo } from './book.js';
import type { Deposit } from './deposits.js';
import { type DepositRow, presentDeposit } from './operator.js';
import * as sql from './sql.js';
import { usdMicrosAt } from './value.js';

export interface AssignInput {
  /** The transaction whose unattributed and held deposits are credited. */
  signature: string;
  /** A live account. */
  accountId: string;
  /**
   * USD per whole token for the held deposits, as the operator states it (an exact decimal); without
   * it, held USDC counts at 1.00 and held SOL is refused. Unattributed deposits always keep the
   * value recorded when they were finalized.
   */
  rate?: string | undefined;
}

/** Why nothing of the transaction can be assigned: each deposit with its fate. */
function fates(rows: DepositRow[]): string {
  return rows
    .map((r) =>
      r.status === 'credited'
        ? `${r.reference}: credited to ${r.account_id} (entry ${r.ledger_entry_id})`
        : `${r.reference}: ${r.status}${r.reason ? ` (${r.reason})` : ''}`,
    )
    .join(', ');
}

function checkedRate(rate: string): string {
  try {
    usdMicrosAt(1n, 0, rate);
  } catch {
    throw new AppError('VALIDATION_ERROR', `The rate "${rate}" is not a decimal number of USD per token`);
  }
  return rate;
}

/**
 * `sibyl deposits assign SIGNATURE ACCOUNT_ID [USD_PER_TOKEN]` (docs/deposits.md#operations): the
 * operator's decision for a transaction's deposits the watcher could not credit. Unattributed ones
 * are credited at the value recorded when they were finalized; held ones (docs/deposits.md#value: USDC off
 * its peg, or no price) at the operator's rate — 1.00 for USDC when none is given — which is stored as
 * the entry's rate. All in one transaction, the credits in one ledger statement, once: the deposit
 * rows are locked first, so of two concurrent assignments the second finds them credited and does
 * nothing (an error that says so), and the ledger's unique deposit reference refuses a second entry
 * anyway. Never to a sandbox account. Each credit records its `deposit.credited` in the same
 * transaction, as the watcher's do (docs/webhooks.md#event-catalog).
 */
export async function assignDeposits(ctx: Context, input: AssignInput) {
  const { signature, accountId } = input;
  const rate = input.rate === undefined ? undefined : checkedRate(input.rate);
  const account = await getAccount(ctx, accountId);
  if (account.mode !== 'live') {
    throw new AppError(
      'VALIDATION_ERROR',
      `Account ${accountId} is a sandbox account: never funded from the chain`,
    );
  }
  return withTransaction(ctx, async (txCtx) => {
    const rows = await txCtx.tx.query<DepositRow>(sql.LOCK_SIGNATURE, [signature]);
    if (rows.length === 0) throw new AppError('NOT_FOUND', `No deposit of transaction ${signature}`);
    const open = rows.filter((r) => r.status === 'unattributed' || r.status === 'held');
    if (open.length === 0) {
      throw new AppError(
        'VALIDATION_ERROR',
        `Transaction ${signature} has no unattributed or held deposit; nothing done (${fates(rows)})`,
      );
    }
    const held = open.filter((r) => r.status === 'held');
    if (rate !== undefined && held.length === 0) {
      throw new AppError(
        'VALIDATION_ERROR',
        `A rate applies to held deposits only; transaction ${signature} has none (unattributed deposits keep their recorded value)`,
      );
    }
    if (rate !== undefined && new Set(held.map((r) => r.asset)).size > 1) {
      throw new AppError(
        'VALIDATION_ERROR',
        `Transaction ${signature} holds both SOL and USDC: one rate cannot value both`,
      );
    }
    const valued = open.map((row) => {
      const amount = BigInt(row.amount);
      if (row.status === 'unattributed') {
        return { row, rate: row.rate as string, usdMicros: BigInt(row.usd_micros as bigint) };
      }
      const applied = rate ?? (row.asset === 'USDC' ? '1' : null);
      if (applied === null) {
        throw new AppError(
          'VALIDATION_ERROR',
          `${row.reference} is held SOL (${row.reason}): state its rate, USD per SOL, to credit it`,
        );
      }
      const usdMicros = usdMicrosAt(amount, row.decimals, applied);
      if (usdMicros <= 0n) {
        throw new AppError('VALIDATION_ERROR', `${row.reference} is worth nothing at ${applied} USD`);
      }
      return { row, rate: applied, usdMicros };
    });
    const entries = await creditDeposits(
      txCtx,
      valued.map(({ row, rate: applied, usdMicros }) => {
        const deposit = {
          asset: row.asset,
          amount: BigInt(row.amount),
          decimals: row.decimals,
          slot: Number(row.slot),
        };
        const memo = depositMemo(deposit as Deposit, applied);
        return {
          accountId,
          amountMicros: usdMicros,
          reference: row.reference,
          memo: row.status === 'held' ? `${memo}; held (${row.reason}), valued by the operator` : memo,
        };
      }),
    );
    const credited = [];
    for (const [i, { row, rate: applied, usdMicros }] of valued.entries()) {
      const { entryId } = entries[i] as { entryId: bigint };
      await txCtx.tx.query(sql.ASSIGN, [row.reference, accountId, entryId, applied, usdMicros]);
      credited.push({
        ...presentDeposit({ ...row, rate: applied, usd_micros: usdMicros }),
        status: 'credited' as const,
        reason: 'operator',
        accountId,
        entryId: String(entryId),
        previousStatus: row.status,
      });
    }
    await announceCredits(
      txCtx,
      valued.map(({ row, rate: applied, usdMicros }, i) => ({
        accountId,
        reference: row.reference,
        signature: row.signature,
        asset: row.asset,
        amount: BigInt(row.amount),
        decimals: row.decimals,
        slot: Number(row.slot),
        rate: applied,
        usdMicros,
        seenAt: row.seen_at,
        balanceMicros: (entries[i] as { balanceMicros: bigint }).balanceMicros,
      })),
    );
    return credited;
  });
}
