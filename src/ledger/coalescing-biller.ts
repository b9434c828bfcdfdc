import type { Database } from '../db/database.js';
import { AnswerParts } from '../idempotency/index.js';
import { metrics } from '../metrics/metrics.js';
import { decide, type FailedItems, REFUSED } from './batch-statements.js';
import type { Biller, BillingOutcome } from './biller.js';
import { type ChargeRequest, chargeAlone } from './charge.js';
import { chargeInTransaction, chargeStoring } from './keyed-batch.js';

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
  /**
   * Start a batch only once the event loop has turned, with every charge that arrived meanwhile:
   * for the embedded database (see `gather` below). Default false: a batch starts at once.
   */
  gather?: boolean;
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
  /**
   * The embedded database (PGlite) runs in this thread and answers a batch without the event loop
   * turning: a batch sent the moment a charge arrives would carry that charge alone, every request
   * its own commit. There a batch starts once the event loop has turned (setImmediate), and takes
   * every charge the requests read meanwhile. Over a network (PostgreSQL) charges queue while the
   * batch in flight is on the wire, and a batch starts at once. (options.gather)
   */
  private gathering = false;
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

  /** Starts batches now, or once the event loop has turned (options.gather: the embedded database). */
  private pump(): void {
    if (!this.options.gather) {
      this.send();
      return;
    }
    if (this.gathering) return;
    this.gathering = true;
    setImmediate(() => {
      this.gathering = false;
      this.send();
    });
  }

  /**
   * Starts batches while there is room. A batch takes only charges of accounts that no batch in
   * flight holds: a second batch on a locked account would just wait for the lock (and split the
   * first one's load), while batches on disjoint accounts run side by side on separate connections.
   * Charges of a busy account keep their order and wait for the next batch.
   */
  private send(): void {
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
   * by a second. A batch with answers to store (Idempotency-Key) stores them with its charges
   * (keyed-batch.ts). A batch with rows its charges pay for (scheduled jobs) is one transaction: the
   * charges, their rows and their answers commit together, or nothing of the batch does. `settled` runs as soon as the statements have committed (or failed), before
   * any caller hears back: the next batch is then already on its way to the database while this
   * one's responses are written.
   */
  private async flush(batch: Pending[], settled: () => void): Promise<void> {
    this.stats.batches++;
    this.stats.charges += batch.length;
    this.stats.largestBatch = Math.max(this.stats.largestBatch, batch.length);
    const items = batch.map((p) => p.input);
    const outcomes: BillingOutcome[] = batch.map(() => REFUSED);
    // Items whose statement failed: nothing of that statement was committed.
    let failed: FailedItems;
    try {
      if (items.some((c) => c.rows)) {
        await chargeInTransaction(this.db, this.parts, items, outcomes);
        failed = undefined;
      } else if (items.some((c) => c.answer)) {
        failed = await chargeStoring(this.db, this.parts, items, outcomes);
      } else {
        failed = await decide(this.db, items, outcomes, false);
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
}
