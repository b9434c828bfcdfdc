import { type Context, queryable } from '../context.js';
import { afterCommit } from '../db/after-commit.js';
import { isUniqueViolation, type Queryable } from '../db/database.js';
import { AppError } from '../errors.js';
import { formatUsd } from '../lib/money.js';
import { metrics } from '../metrics/metrics.js';
import * as sql from './sql.js';

export interface ChargeInput {
  accountId: string;
  amountMicros: bigint;
  /** What was sold: the route's operationId, e.g. `getPrice`. */
  operation: string;
  requestId?: string | undefined;
  keyId?: string | undefined;
}

export type ChargeOutcome =
  | { ok: true; entryId: bigint; balanceMicros: bigint }
  | { ok: false; reason: 'INSUFFICIENT_BALANCE' };

interface EntryRow {
  id: bigint;
  balance_after_micros: bigint;
}

function assertPositive(amount: bigint, what: string): void {
  if (amount <= 0n) throw new AppError('VALIDATION_ERROR', `${what} must be a positive amount`);
}

/** One guarded statement: succeeds only if the balance covers the amount. */
export async function chargeAccount(db: Queryable, input: ChargeInput): Promise<ChargeOutcome> {
  assertPositive(input.amountMicros, 'A charge');
  const [row] = await db.query<EntryRow>(sql.CHARGE, [
    input.accountId,
    input.amountMicros,
    input.operation,
    input.requestId ?? null,
    input.keyId ?? null,
  ]);
  if (!row) return { ok: false, reason: 'INSUFFICIENT_BALANCE' };
  return { ok: true, entryId: row.id, balanceMicros: row.balance_after_micros };
}

export interface DepositInput {
  accountId: string;
  amountMicros: bigint;
  /** External reference (e.g. a transaction signature); a deposit is credited once per reference. */
  reference: string;
  memo?: string | undefined;
}

export interface DepositOutcome {
  entryId: bigint;
  balanceMicros: bigint;
  /** True when this reference had already been credited; nothing changed this time. */
  duplicate: boolean;
}

export async function creditDeposit(ctx: Context, input: DepositInput): Promise<DepositOutcome> {
  const db = queryable(ctx);
  assertPositive(input.amountMicros, 'A deposit');
  if (input.reference.trim() === '') throw new AppError('VALIDATION_ERROR', 'A deposit needs a reference');
  // In a caller's transaction a unique violation would abort it (every later statement refused):
  // a savepoint keeps the caller's transaction usable for the duplicate's answer and what follows.
  const savepoint = ctx.tx !== null;
  if (savepoint) await db.query(sql.SAVEPOINT_DEPOSIT);
  try {
    const [row] = await db.query<EntryRow>(sql.DEPOSIT, [
      input.accountId,
      input.amountMicros,
      input.reference,
      input.memo ?? null,
    ]);
    if (!row) throw new AppError('ACCOUNT_NOT_FOUND', `Account ${input.accountId} does not exist`);
    if (savepoint) await db.query(sql.RELEASE_DEPOSIT);
    return { entryId: row.id, balanceMicros: row.balance_after_micros, duplicate: false };
  } catch (err) {
    if (savepoint) await db.query(sql.ROLLBACK_TO_DEPOSIT);
    if (!isUniqueViolation(err, 'ledger_entries_deposit_reference')) throw err;
  }
  const [existing] = await db.query<{ id: bigint; account_id: string; amount_micros: bigint }>(
    sql.FIND_DEPOSIT,
    [input.reference],
  );
  if (!existing || existing.account_id !== input.accountId || existing.amount_micros !== input.amountMicros) {
    throw new AppError(
      'VALIDATION_ERROR',
      `Reference ${input.reference} was already credited with a different account or amount`,
      { details: { problems: [{ path: 'reference', message: 'already used for a different deposit' }] } },
    );
  }
  return { entryId: existing.id, balanceMicros: await getBalance(ctx, input.accountId), duplicate: true };
}

/**
 * Credits `amountMicros`, or less so that the balance stays at or under `capMicros`, in one guarded
 * statement (so concurrent credits cannot together pass the cap). Credits nothing, and returns null,
 * when the balance is already at the cap. Used for sandbox play money.
 */
export async function creditUpTo(
  ctx: Context,
  input: DepositInput & { capMicros: bigint },
): Promise<{ entryId: bigint; amountMicros: bigint; balanceMicros: bigint } | null> {
  assertPositive(input.amountMicros, 'A deposit');
  const [row] = await queryable(ctx).query<EntryRow & { amount_micros: bigint }>(sql.DEPOSIT_UP_TO, [
    input.accountId,
    input.amountMicros,
    input.capMicros,
    input.reference,
    input.memo ?? null,
  ]);
  return row
    ? { entryId: row.id, amountMicros: row.amount_micros, balanceMicros: row.balance_after_micros }
    : null;
}

export interface RefundOutcome {
  entryId: bigint;
  amountMicros: bigint;
  balanceMicros: bigint;
}

export class AlreadyRefundedError extends Error {
  override name = 'AlreadyRefundedError';
}

/**
 * Gives back a whole charge, at most once (a unique index, not a check in code). Throws
 * `AlreadyRefundedError` on the second attempt and NOT_FOUND when `chargeEntryId` is not a charge
 * (of `accountId`, when given).
 */
export async function refundCharge(
  db: Queryable,
  input: { chargeEntryId: bigint; accountId?: string; memo?: string },
): Promise<RefundOutcome> {
  try {
    const [row] = await db.query<{
      id: bigint;
      amount_micros: bigint;
      balance_after_micros: bigint;
      operation: string;
    }>(sql.REFUND, [input.chargeEntryId, input.accountId ?? null, input.memo ?? null]);
    if (!row) throw new AppError('NOT_FOUND', `Charge ${input.chargeEntryId} not found`);
    afterCommit(db, () => metrics.refunded(row.operation, row.amount_micros));
    return { entryId: row.id, amountMicros: row.amount_micros, balanceMicros: row.balance_after_micros };
  } catch (err) {
    if (isUniqueViolation(err, 'ledger_entries_refund_once')) {
      throw new AlreadyRefundedError(`Charge ${input.chargeEntryId} was already refunded`);
    }
    throw err;
  }
}

/** Operator correction, signed; never takes the balance below zero. */
export async function adjustBalance(
  ctx: Context,
  input: { accountId: string; amountMicros: bigint; memo: string },
): Promise<{ entryId: bigint; balanceMicros: bigint }> {
  if (input.amountMicros === 0n) throw new AppError('VALIDATION_ERROR', 'An adjustment cannot be zero');
  const db = queryable(ctx);
  const [row] = await db.query<EntryRow>(sql.ADJUST, [input.accountId, input.amountMicros, input.memo]);
  if (row) return { entryId: row.id, balanceMicros: row.balance_after_micros };
  const [exists] = await db.query(sql.ACCOUNT_EXISTS, [input.accountId]);
  if (!exists) throw new AppError('ACCOUNT_NOT_FOUND', `Account ${input.accountId} does not exist`);
  throw new AppError('INSUFFICIENT_BALANCE', 'The adjustment would take the balance below zero');
}

/** The account's balance as of the caller's transaction (when there is one: its own writes included). */
export async function getBalance(ctx: Context, accountId: string): Promise<bigint> {
  const [row] = await queryable(ctx).query<{ balance_micros: bigint }>(sql.BALANCE, [accountId]);
  if (!row) throw new AppError('ACCOUNT_NOT_FOUND', `Account ${accountId} does not exist`);
  return row.balance_micros;
}

export interface ReconciliationReport {
  ok: boolean;
  /** Accounts whose balance is not the sum of their entries, or not their last running balance. */
  balanceMismatches: { accountId: string; balanceMicros: bigint; ledgerTotalMicros: bigint }[];
  /** Entries whose running balance does not follow from the previous one. */
  brokenChainEntries: bigint[];
  /** Refunds that exceed, or do not match, the charge they refer to. */
  invalidRefunds: bigint[];
}

/**
 * The ledger's invariants, checked from scratch: every balance equals the sum of its account's
 * entries and its last running balance; running balances chain entry to entry; no refund exceeds,
 * or gives back anything but, a charge of the same account.
 */
export async function reconcileLedger(db: Queryable): Promise<ReconciliationReport> {
  const balances = await db.query<{ account_id: string; balance_micros: bigint; ledger_total: bigint }>(
    sql.RECONCILE_BALANCES,
  );
  const chain = await db.query<{ id: bigint }>(sql.RECONCILE_CHAIN);
  const refunds = await db.query<{ id: bigint }>(sql.RECONCILE_REFUNDS);
  return {
    ok: balances.length === 0 && chain.length === 0 && refunds.length === 0,
    balanceMismatches: balances.map((r) => ({
      accountId: r.account_id,
      balanceMicros: r.balance_micros,
      ledgerTotalMicros: r.ledger_total,
    })),
    brokenChainEntries: chain.map((r) => r.id),
    invalidRefunds: refunds.map((r) => r.id),
  };
}

/** A report as operators read it (CLI, worker log): amounts in USD, ids as strings. */
export function reconciliationView(report: ReconciliationReport) {
  return {
    ok: report.ok,
    balanceMismatches: report.balanceMismatches.map((m) => ({
      accountId: m.accountId,
      balanceUsd: formatUsd(m.balanceMicros),
      ledgerTotalUsd: formatUsd(m.ledgerTotalMicros),
    })),
    brokenChainEntries: report.brokenChainEntries.map(String),
    invalidRefunds: report.invalidRefunds.map(String),
  };
}
