import { type Database, isUniqueViolation, type Queryable } from '../db/database.js';
import { AnswerParts } from '../idempotency/answer-parts.js';
import {
  KEY_TAKEN,
  KeysTakenError,
  type NewAnswer,
  type PendingAnswer,
  storeNewAnswers,
} from '../idempotency/pending-answer.js';
import { metrics } from '../metrics/metrics.js';
import type { Biller, BillingOutcome } from './biller.js';
import { type ChargeRequest, chargeAlone } from './charge.js';
import * as sql from './sql.js';

interface Pending {
  input: ChargeRequest;
  resolve: (outcome: BillingOutcome) => void;
  reject: (err: unknown) => void;
}

export interface CoalescingOptions {
  /** Most charges sent in one statement. */
  maxBatch: number;
  /** Batches in flight at once; charges arriving meanwhile wait for the next one. */
  maxInFlight: number;
}

export interface CoalescingStats {
  batches: number;
  charges: number;
  largestBatch: number;
}

/**
 * Coalesces charges: while a batch statement is in flight, charges that arrive queue up and go to
 * the database together in the next one. Each still succeeds or fails on its own against the
 * balance, and each caller's promise resolves only after the batch committed, so no response is
 * sent for a charge that lives only in memory. Under light load a batch holds one charge and adds
 * no delay; under heavy load one commit carries hundreds. Charges against quotas keep their own
 * transaction (chargeAlone).
 */
export class CoalescingBiller implements Biller {
  private queue: Pending[] = [];
  private inFlight = 0;
  /** Accounts with a batch in flight: their rows are locked until it commits. */
  private readonly busyAccounts = new Map<string, number>();
  readonly stats: CoalescingStats = { batches: 0, charges: 0, largestBatch: 0 };

  constructor(
    private readonly db: Database,
    private readonly options: CoalescingOptions,
    /** Shared parts of stored answers (Idempotency-Key): see idempotency/answer-parts.ts. */
    private readonly parts: AnswerParts = new AnswerParts(),
  ) {}

  charge(input: ChargeRequest): Promise<BillingOutcome> {
    if (input.quota) return chargeAlone(this.db, input);
    if (input.amountMicros <= 0n) return Promise.reject(new Error('A charge must be a positive amount'));
    return new Promise<BillingOutcome>((resolve, reject) => {
      this.queue.push({ input, resolve, reject });
      this.pump();
    });
  }

  /**
   * Starts batches while there is room. A batch takes only charges of accounts that no batch in
   * flight holds: a second batch on a locked account would just wait for the lock (and split the
   * first one's load), while batches on disjoint accounts run side by side on separate connections.
   * Charges of a busy account keep their order and wait for the next batch.
   */
  private pump(): void {
    while (this.inFlight < this.options.maxInFlight && this.queue.length > 0) {
      const batch: Pending[] = [];
      const waiting: Pending[] = [];
      for (const pending of this.queue) {
        if (batch.length < this.options.maxBatch && !this.busyAccounts.has(pending.input.accountId)) {
          batch.push(pending);
        } else {
          waiting.push(pending);
        }
      }
      if (batch.length === 0) return;
      this.queue = waiting;
      const accounts = [...new Set(batch.map((p) => p.input.accountId))];
      for (const id of accounts) this.busyAccounts.set(id, (this.busyAccounts.get(id) ?? 0) + 1);
      this.inFlight++;
      void this.flush(batch, () => {
        for (const id of accounts) {
          const left = (this.busyAccounts.get(id) ?? 1) - 1;
          if (left > 0) this.busyAccounts.set(id, left);
          else this.busyAccounts.delete(id);
        }
        this.inFlight--;
        this.pump();
      });
    }
  }

  /**
   * Sends one batch: one statement charges every account that covers all of its items (nearly
   * always all of them); items of an account that does not are then decided one by one, in order,
   * by a second statement. `settled` runs as soon as the statements have committed (or failed),
   * before any caller hears back: the next batch is then already on its way to the database while
   * this one's responses are written.
   */
  private async flush(batch: Pending[], settled: () => void): Promise<void> {
    this.stats.batches++;
    this.stats.charges += batch.length;
    this.stats.largestBatch = Math.max(this.stats.largestBatch, batch.length);
    const outcomes: BillingOutcome[] = batch.map(() => REFUSED);
    // Items whose statement failed: nothing of that statement was committed.
    let failed: { items: Set<number>; err: unknown } | undefined;
    try {
      if (batch.some((p) => p.input.answer)) {
        failed = await this.chargeStoring(batch, outcomes);
      } else {
        failed = await this.decide(this.db, batch, outcomes, false);
      }
    } catch (err) {
      failed = { items: new Set(batch.keys()), err };
    }
    settled();
    if (!failed) metrics.chargeBatch(batch.length);
    batch.forEach((pending, i) => {
      if (failed?.items.has(i)) pending.reject(failed.err);
      else pending.resolve(outcomes[i] as BillingOutcome);
    });
  }

  /**
   * A batch with answers to store (Idempotency-Key). Nearly always one statement charges it and
   * stores the answers of its charged items, taking their keys (CHARGE_COVERED_STORING): one round
   * trip, as for a batch without keys. New shared parts go first, committed on their own: a part no
   * answer refers to is harmless, and pruned a day later. Items of an account that does not cover
   * its items are then decided one by one, in a transaction with their answers (chargeKeyed), as
   * is the whole batch when one of its keys turns out to be taken (the statement then fails on the
   * key's primary key, charging nothing) or appears twice in it. Returns the items whose charge
   * failed after others committed.
   */
  private async chargeStoring(
    batch: Pending[],
    outcomes: BillingOutcome[],
  ): Promise<{ items: Set<number>; err: unknown } | undefined> {
    if (repeatedKeys(batch).size > 0) {
      await this.chargeKeyed(batch, outcomes);
      return undefined;
    }
    await this.parts.store(
      this.db,
      batch.flatMap((p) => (p.input.answer ? [p.input.answer.awaiting] : [])),
    );
    let rows: CoveredRow[];
    try {
      rows = await this.db.query<CoveredRow>(sql.CHARGE_COVERED_STORING, storingColumns(batch));
    } catch (err) {
      if (!isUniqueViolation(err, 'idempotency_keys_pkey')) throw err;
      await this.chargeKeyed(batch, outcomes);
      return undefined;
    }
    const short = new Set<string>();
    for (const row of rows) {
      if (row.item === null) {
        short.add(row.account_id);
        continue;
      }
      outcomes[row.item - 1] = charged(row);
    }
    if (short.size === 0) return undefined;
    const left = [...batch.keys()].filter((i) => short.has((batch[i] as Pending).input.accountId));
    const decided: BillingOutcome[] = left.map(() => REFUSED);
    try {
      await this.chargeKeyed(
        left.map((i) => batch[i] as Pending),
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
   * A batch with answers to store (Idempotency-Key): the charges and the answers, which take their
   * keys, commit together in one transaction. An item whose key turns out to be taken — by an
   * earlier item of the batch, or by a committed or concurrent request — must not be charged: the
   * transaction is then rolled back and the batch charged again without it. That costs a second
   * transaction only when a key was reused, which a retry of an answered request does.
   */
  private async chargeKeyed(batch: Pending[], outcomes: BillingOutcome[]): Promise<void> {
    const taken = repeatedKeys(batch);
    for (;;) {
      const live = [...batch.keys()].filter((i) => !taken.has(i));
      if (live.length === 0) break;
      const items = live.map((i) => batch[i] as Pending);
      const decided: BillingOutcome[] = items.map(() => REFUSED);
      try {
        await this.db.transaction(async (tx) => {
          await this.decide(tx, items, decided, true);
          await storeAnswers(tx, this.parts, items, decided);
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
   * One statement charges every account that covers all of its items (nearly always all of them);
   * items of an account that does not are then decided one by one, in order, by a second. Outside a
   * transaction each statement commits on its own, so a failure of the second leaves the first's
   * charges standing (returned as the failed items); inside one (`atomic`), any failure throws.
   */
  private async decide(
    db: Queryable,
    batch: Pending[],
    outcomes: BillingOutcome[],
    atomic: boolean,
  ): Promise<{ items: Set<number>; err: unknown } | undefined> {
    const rows = await db.query<CoveredRow>(sql.CHARGE_COVERED, columns(batch));
    const short = new Map<string, bigint>();
    for (const row of rows) {
      if (row.item === null) short.set(row.account_id, row.balance_after);
      else outcomes[row.item - 1] = charged(row);
    }
    const each = short.size > 0 ? itemsWorthDeciding(batch, short) : [];
    if (each.length === 0) return undefined;
    try {
      const eachRows = await db.query<EachRow>(
        sql.CHARGE_EACH,
        columns(each.map((i) => batch[i] as Pending)),
      );
      for (const row of eachRows) outcomes[each[row.item - 1] as number] = charged(row);
    } catch (err) {
      if (atomic) throw err;
      return { items: new Set(each), err };
    }
    return undefined;
  }
}

/**
 * Stores the answers of the charged items that carry one (Idempotency-Key), rendered with the
 * balance each charge left, in the batch's transaction: first the shared parts this process has not
 * stored lately, then every answer's head, part hash and tail, taking its key. Throws
 * KeysTakenError (positions in `batch`) when a key is someone else's.
 */
async function storeAnswers(
  tx: Queryable,
  parts: AnswerParts,
  batch: Pending[],
  outcomes: BillingOutcome[],
): Promise<void> {
  const rows: NewAnswer[] = [];
  const positions: number[] = [];
  batch.forEach((pending, i) => {
    const outcome = outcomes[i] as BillingOutcome;
    const answer = pending.input.answer;
    if (!outcome.ok || !answer) return;
    positions.push(i);
    rows.push({
      accountId: pending.input.accountId,
      requestId: pending.input.requestId ?? '',
      answer,
      shape: answer.shape(outcome.balanceMicros),
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
function repeatedKeys(batch: readonly Pending[]): Set<number> {
  const seen = new Set<string>();
  const repeated = new Set<number>();
  batch.forEach(({ input }, i) => {
    if (!input.answer) return;
    const id = `${input.accountId}\u0000${input.answer.idempotencyKey}`;
    if (seen.has(id)) repeated.add(i);
    else seen.add(id);
  });
  return repeated;
}

interface EachRow {
  item: number;
  entry_id: bigint;
  balance_after: bigint;
}

type CoveredRow =
  | { item: number; entry_id: bigint; balance_after: bigint; account_id: null }
  | {
      item: null;
      entry_id: null;
      /** The balance of an account that does not cover all of its items. */
      balance_after: bigint;
      account_id: string;
    };

const REFUSED: BillingOutcome = { ok: false, reason: 'INSUFFICIENT_BALANCE' };

function charged(row: EachRow): BillingOutcome {
  return { ok: true, entryId: row.entry_id, balanceMicros: row.balance_after };
}

function columns(batch: readonly Pending[]): unknown[] {
  return [
    batch.map((p) => p.input.accountId),
    batch.map((p) => p.input.amountMicros),
    batch.map((p) => p.input.operation),
    batch.map((p) => p.input.requestId ?? null),
    batch.map((p) => p.input.keyId ?? null),
  ];
}

/** columns() and, for CHARGE_COVERED_STORING, each item's answer as stored (NULLs without one). */
function storingColumns(batch: readonly Pending[]): unknown[] {
  const answers = batch.map((p) => p.input.answer);
  const of = <T>(pick: (answer: PendingAnswer) => T) => answers.map((a) => (a ? pick(a) : null));
  return [
    ...columns(batch),
    of((a) => a.idempotencyKey),
    of((a) => a.fingerprint),
    of((a) => a.awaiting.head),
    of((a) => a.awaiting.part?.hash ?? null),
    of((a) => a.awaiting.tail),
    of((a) => a.createdAt),
  ];
}

/**
 * Positions of the items to decide one by one: those of the accounts short of their total whose
 * balance covers at least one of their items (when none fits, every item is refused as it stands).
 */
function itemsWorthDeciding(batch: readonly Pending[], short: ReadonlyMap<string, bigint>): number[] {
  const fitting = new Set<string>();
  for (const { input } of batch) {
    const balance = short.get(input.accountId);
    if (balance !== undefined && input.amountMicros <= balance) fitting.add(input.accountId);
  }
  return [...batch.keys()].filter((i) => fitting.has((batch[i] as Pending).input.accountId));
}
