import { type Context, queryable } from '../context.js';
import { isUniqueViolation } from '../db/database.js';
import { AppError } from '../errors.js';
import * as sql from './sql.js';

/** One deposit of a batch: credited under its reference, unique in the ledger. */
export interface DepositCredit {
  accountId: string;
  amountMicros: bigint;
  reference: string;
  memo?: string | null | undefined;
}

export interface CreditedDeposit {
  entryId: bigint;
  /** The account's balance right after this entry. */
  balanceMicros: bigint;
}

/** A reference of the batch was credited before (or is in it twice): nothing of the batch was. */
export class DepositAlreadyCreditedError extends Error {
  override name = 'DepositAlreadyCreditedError';
}

/**
 * Credits a batch of deposits in one statement (sql.CREDIT_DEPOSITS), all or nothing: exactly once
 * per reference, by the ledger's unique deposit reference, whatever crashes, reruns or concurrent
 * writers do. Answers each deposit's entry and running balance, in the order given. Inside the
 * caller's transaction when there is one, so what the credits are for commits with them.
 */
export async function creditDeposits(
  ctx: Context,
  entries: readonly DepositCredit[],
): Promise<CreditedDeposit[]> {
  if (entries.length === 0) return [];
  for (const e of entries) {
    if (e.amountMicros <= 0n) throw new AppError('VALIDATION_ERROR', 'A deposit must be a positive amount');
    if (e.reference.trim() === '') throw new AppError('VALIDATION_ERROR', 'A deposit needs a reference');
  }
  let rows: { item: number; entry_id: bigint; balance_after: bigint }[];
  try {
    rows = await queryable(ctx).query(sql.CREDIT_DEPOSITS, [
      entries.map((e) => e.accountId),
      entries.map((e) => e.amountMicros),
      entries.map((e) => e.reference),
      entries.map((e) => e.memo ?? null),
    ]);
  } catch (err) {
    if (isUniqueViolation(err, 'ledger_entries_deposit_reference')) {
      throw new DepositAlreadyCreditedError('A deposit reference of the batch was already credited');
    }
    if ((err as { code?: unknown }).code === '23503') {
      throw new AppError('ACCOUNT_NOT_FOUND', 'An account of the deposit batch does not exist');
    }
    throw err;
  }
  const out: CreditedDeposit[] = new Array(entries.length);
  for (const row of rows) out[row.item - 1] = { entryId: row.entry_id, balanceMicros: row.balance_after };
  return out;
}
