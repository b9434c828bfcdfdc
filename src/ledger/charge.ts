import type { TxContext } from '../context.js';
import type { Database, Queryable } from '../db/database.js';
import { AppError } from '../errors.js';
import {
  KEY_TAKEN,
  KeysTakenError,
  type KeyTaken,
  type PendingAnswer,
  storeNewAnswers,
} from '../idempotency/index.js';
import { formatUsd } from '../lib/money.js';
import { countAgainstQuotas, type QuotaContext, type QuotaRefusal, quotaError } from '../limits/index.js';
import { type ChargeInput, chargeAccount } from './ledger.js';
import * as sql from './sql.js';

export interface ChargeRequest extends ChargeInput {
  /** Set when the key has quotas: the charge then also counts against them, atomically. */
  quota?: QuotaContext | undefined;
  /** An answer to store for replay (Idempotency-Key) in the same transaction as the charge. */
  answer?: PendingAnswer | undefined;
  /**
   * Rows the charge pays for (a scheduled job), written in the charge's transaction with the entry it
   * made: both commit, or neither does. A refused charge writes none.
   */
  rows?: PaidRows | undefined;
}

/** A charged item's row, with the ledger entry that paid for it. */
export interface PaidRow<T> {
  row: T;
  entryId: bigint;
  amountMicros: bigint;
}

/**
 * Writes the rows of charged items, of one kind, inside the transaction that charged them: the room
 * owning the table supplies it (its SQL stays there). A batch of charges calls it once with every
 * charged item's row, so one statement writes them all.
 */
export interface RowsWriter<T> {
  write(tx: Queryable, rows: readonly PaidRow<T>[]): Promise<void>;
}

/** A row and its writer, as a charge request carries them (made by `paidRows`). */
export interface PaidRows {
  readonly writer: RowsWriter<unknown>;
  readonly row: unknown;
}

export function paidRows<T>(writer: RowsWriter<T>, row: T): PaidRows {
  return { writer: writer as RowsWriter<unknown>, row };
}

/**
 * Writes the rows of the charged items of a batch (`outcomes` by position) in the caller's
 * transaction: one call per writer, in the order the writers first appear.
 */
export async function writePaidRows(
  tx: Queryable,
  items: readonly ChargeRequest[],
  outcomes: readonly { ok: boolean; entryId?: bigint }[],
): Promise<void> {
  const byWriter = new Map<RowsWriter<unknown>, PaidRow<unknown>[]>();
  items.forEach((item, i) => {
    const outcome = outcomes[i];
    if (!item.rows || !outcome?.ok || outcome.entryId === undefined) return;
    const rows = byWriter.get(item.rows.writer) ?? [];
    rows.push({ row: item.rows.row, entryId: outcome.entryId, amountMicros: item.amountMicros });
    byWriter.set(item.rows.writer, rows);
  });
  for (const [writer, rows] of byWriter) await writer.write(tx, rows);
}

/** A charge that was made: its ledger entry and the balance it left. */
export interface Charged {
  ok: true;
  entryId: bigint;
  amountMicros: bigint;
  balanceMicros: bigint;
}

/** A transaction in which the request being served can be charged (once): see defineRoute. */
export interface ChargingContext extends TxContext {
  /** Charges the request (its route's price unless given) in this transaction. */
  charge(amountMicros?: bigint): Promise<Charged>;
}

export type ChargeRefusal = QuotaRefusal | { ok: false; reason: 'INSUFFICIENT_BALANCE' };

/**
 * A refused charge, as the error the HTTP edge answers (402 INSUFFICIENT_BALANCE or 429
 * QUOTA_EXCEEDED). Thrown out of a transaction it rolls everything back, quota counters included.
 */
export class ChargeRefusedError extends AppError {
  constructor(
    readonly refusal: ChargeRefusal,
    amountMicros: bigint,
    quota: QuotaContext | undefined,
    /** The balance that could not pay, when known: shown as `details.balanceUsd`. */
    balanceMicros?: bigint,
  ) {
    const error =
      refusal.reason === 'QUOTA_EXCEEDED' && quota
        ? quotaError(refusal, quota.limits, quota.now.getTime())
        : insufficientBalance(amountMicros, balanceMicros);
    super(error.code, error.message, {
      ...(error.details ? { details: error.details } : {}),
      ...(error.headers ? { headers: error.headers } : {}),
    });
    this.name = 'ChargeRefusedError';
  }
}

export function insufficientBalance(amountMicros: bigint, balanceMicros?: bigint): AppError {
  return new AppError(
    'INSUFFICIENT_BALANCE',
    `The balance cannot pay for this request (${formatUsd(amountMicros)} USD)`,
    {
      details: {
        costUsd: formatUsd(amountMicros),
        ...(balanceMicros === undefined ? {} : { balanceUsd: formatUsd(balanceMicros) }),
      },
    },
  );
}

/** The balance now, for a refusal's details (a refusal is rare: one more read on that path only). */
export async function balanceOf(db: Queryable, accountId: string): Promise<bigint | undefined> {
  const [row] = await db.query<{ balance_micros: bigint }>(sql.BALANCE, [accountId]);
  return row?.balance_micros;
}

/**
 * Charges inside the caller's transaction: the key's quota counters (when it has quotas) and the
 * guarded balance debit with its ledger entry, in that lock order. Throws ChargeRefusedError when
 * a quota or the balance refuses; letting it propagate rolls the caller's transaction back, so the
 * rows the charge would have paid for are never written either.
 */
export async function charge(tx: Queryable, request: ChargeRequest): Promise<Charged> {
  if (request.quota) {
    const refusal = await countAgainstQuotas(tx, request.quota, request.amountMicros);
    if (refusal) throw new ChargeRefusedError(refusal, request.amountMicros, request.quota);
  }
  const outcome = await chargeAccount(tx, request);
  if (!outcome.ok) {
    const balance = await balanceOf(tx, request.accountId);
    throw new ChargeRefusedError(outcome, request.amountMicros, request.quota, balance);
  }
  return {
    ok: true,
    entryId: outcome.entryId,
    amountMicros: request.amountMicros,
    balanceMicros: outcome.balanceMicros,
  };
}

/**
 * A charge in a transaction of its own, answering the refusal instead of throwing it, with the rows
 * it pays for (`rows`) when it has some. With an answer to store (Idempotency-Key), the answer is stored whole, completed with the balance the
 * charge left, in the same transaction, taking its key; if the key is someone else's, nothing is
 * charged and the outcome says so.
 */
export async function chargeAlone(
  db: Database,
  request: ChargeRequest,
): Promise<Charged | ChargeRefusal | KeyTaken> {
  try {
    return await db.transaction(async (tx) => {
      const charged = await charge(tx, request);
      if (request.rows) await writePaidRows(tx, [request], [charged]);
      if (!request.answer) return charged;
      await storeNewAnswers(tx, [
        {
          accountId: request.accountId,
          requestId: request.requestId ?? '',
          answer: request.answer,
          shape: { head: request.answer.render(charged.balanceMicros), tail: null },
        },
      ]);
      return charged;
    });
  } catch (err) {
    if (err instanceof ChargeRefusedError) return err.refusal;
    if (err instanceof KeysTakenError) return KEY_TAKEN;
    throw err;
  }
}
