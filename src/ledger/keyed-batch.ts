import { type Database, isUniqueViolation, type Queryable } from '../db/database.js';
import {
  type AnswerParts,
  KEY_TAKEN,
  KeysTakenError,
  type NewAnswer,
  type PendingAnswer,
  storeNewAnswers,
} from '../idempotency/index.js';
import { type CoveredRow, charged, columns, decide, type FailedItems, REFUSED } from './batch-statements.js';
import type { BillingOutcome } from './biller.js';
import { type ChargeRequest, writePaidRows } from './charge.js';
import * as sql from './sql.js';

/**
 * Charges a coalesced batch in which some charges carry an answer to store (Idempotency-Key,
 * idempotency/pending-answer.ts), `outcomes` by position. Nearly always one statement charges it
 * and stores the answers of its charged items, taking their keys (CHARGE_COVERED_STORING): one
 * round trip, as for a batch without keys. New shared parts go first, committed on their own: a
 * part no answer refers to is harmless, and pruned a day later. Items of an account that does not
 * cover its items are then decided one by one, in a transaction with their answers (chargeInTransaction),
 * as is the whole batch when one of its keys turns out to be taken (the statement then fails on the
 * key's primary key, charging nothing) or appears twice in it. Returns the items whose charge
 * failed after others committed.
 */
export async function chargeStoring(
  db: Database,
  parts: AnswerParts,
  items: readonly ChargeRequest[],
  outcomes: BillingOutcome[],
): Promise<FailedItems> {
  if (repeatedKeys(items).size > 0) {
    await chargeInTransaction(db, parts, items, outcomes);
    return undefined;
  }
  await parts.store(
    db,
    items.flatMap((c) => (c.answer ? [c.answer.awaiting] : [])),
  );
  let rows: CoveredRow[];
  try {
    rows = await db.query<CoveredRow>(sql.CHARGE_COVERED_STORING, storingColumns(items));
  } catch (err) {
    if (!isUniqueViolation(err, 'idempotency_keys_pkey')) throw err;
    await chargeInTransaction(db, parts, items, outcomes);
    return undefined;
  }
  const short = new Set<string>();
  for (const row of rows) {
    if (row.item === null) short.add(row.account_id);
    else outcomes[row.item - 1] = charged(row);
  }
  if (short.size === 0) return undefined;
  const left = [...items.keys()].filter((i) => short.has((items[i] as ChargeRequest).accountId));
  const decided: BillingOutcome[] = left.map(() => REFUSED);
  try {
    await chargeInTransaction(
      db,
      parts,
      left.map((i) => items[i] as ChargeRequest),
      decided,
    );
  } catch (err) {
    return { items: new Set(left), err };
  }
  left.forEach((i, j) => {
    outcomes[i] = decided[j] as BillingOutcome;
  });
  return undefined;
}

/**
 * The transactional path: the charges, the rows they pay for (`rows`: scheduled jobs) and the
 * answers, which take their keys, commit together in one transaction — BEGIN, the charge statement,
 * one statement per kind of row, the answers, COMMIT for the whole batch — or nothing of it does. An item whose key turns out to be taken — by an earlier item of the batch, or by
 * a committed or concurrent request — must not be charged: the transaction is then rolled back and
 * the batch charged again without it, and its outcome is KEY_TAKEN. That costs a second
 * transaction only when a key was reused, which a retry of an answered request does.
 */
export async function chargeInTransaction(
  db: Database,
  parts: AnswerParts,
  items: readonly ChargeRequest[],
  outcomes: BillingOutcome[],
): Promise<void> {
  const taken = repeatedKeys(items);
  for (;;) {
    const live = [...items.keys()].filter((i) => !taken.has(i));
    if (live.length === 0) break;
    const charges = live.map((i) => items[i] as ChargeRequest);
    const decided: BillingOutcome[] = charges.map(() => REFUSED);
    try {
      await db.transaction(async (tx) => {
        await decide(tx, charges, decided, true);
        // The answers first: a key someone else holds rolls the batch back before its rows are sent.
        await storeAnswers(tx, parts, charges, decided);
        await writePaidRows(tx, charges, decided);
      });
    } catch (err) {
      if (!(err instanceof KeysTakenError)) throw err;
      for (const j of err.items) taken.add(live[j] as number);
      continue;
    }
    live.forEach((i, j) => {
      outcomes[i] = decided[j] as BillingOutcome;
    });
    break;
  }
  for (const i of taken) outcomes[i] = KEY_TAKEN;
}

/**
 * Stores the answers of the charged items that carry one, completed with the balance each charge
 * left, in the batch's transaction: first the shared parts this process has not stored lately,
 * then every answer's head, part hash and tail, taking its key. Throws KeysTakenError (positions in
 * `items`) when a key is someone else's.
 */
async function storeAnswers(
  tx: Queryable,
  parts: AnswerParts,
  items: readonly ChargeRequest[],
  outcomes: readonly BillingOutcome[],
): Promise<void> {
  const rows: NewAnswer[] = [];
  const positions: number[] = [];
  items.forEach((item, i) => {
    const outcome = outcomes[i] as BillingOutcome;
    if (!outcome.ok || !item.answer) return;
    positions.push(i);
    rows.push({
      accountId: item.accountId,
      requestId: item.requestId ?? '',
      answer: item.answer,
      shape: item.answer.shape(outcome.balanceMicros),
    });
  });
  if (rows.length === 0) return;
  await parts.store(
    tx,
    rows.map((r) => r.shape),
  );
  try {
    await storeNewAnswers(tx, rows);
  } catch (err) {
    if (err instanceof KeysTakenError) throw new KeysTakenError(err.items.map((j) => positions[j] as number));
    throw err;
  }
}

/** Positions of the items whose key an earlier item of the batch carries: only the first is charged. */
function repeatedKeys(items: readonly ChargeRequest[]): Set<number> {
  const seen = new Set<string>();
  const repeated = new Set<number>();
  items.forEach((item, i) => {
    if (!item.answer) return;
    const id = `${item.accountId}\u0000${item.answer.idempotencyKey}`;
    if (seen.has(id)) repeated.add(i);
    else seen.add(id);
  });
  return repeated;
}

/** columns() and, for CHARGE_COVERED_STORING, each item's answer as stored (NULLs without one). */
function storingColumns(items: readonly ChargeRequest[]): unknown[] {
  const of = <T>(pick: (answer: PendingAnswer) => T) => items.map((c) => (c.answer ? pick(c.answer) : null));
  return [
    ...columns(items),
    of((a) => a.idempotencyKey),
    of((a) => a.fingerprint),
    of((a) => a.awaiting.head),
    of((a) => a.awaiting.part?.hash ?? null),
    of((a) => a.awaiting.tail),
    of((a) => a.createdAt),
  ];
}
