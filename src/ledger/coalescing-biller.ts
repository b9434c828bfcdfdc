import { type Database, statement } from '../db/database.js';
import { chargeWithQuota } from '../limits/quotas.js';
import type { Biller, BillingOutcome, BillingRequest } from './biller.js';
import type { ChargeInput, ChargeOutcome } from './ledger.js';

// One round trip and one commit for the whole batch (migration 0004 explains the function).
const CHARGE_BATCH = statement(
  'ledger_charge_batch',
  'SELECT item, entry_id, balance_after FROM ledger_charge_batch($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[])',
);

interface Pending {
  input: ChargeInput;
  resolve: (outcome: ChargeOutcome) => void;
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
 * transaction (chargeWithQuota).
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
  ) {}

  charge(input: BillingRequest): Promise<BillingOutcome> {
    if (input.quota) return chargeWithQuota(this.db, input, input.quota);
    if (input.amountMicros <= 0n) return Promise.reject(new Error('A charge must be a positive amount'));
    return new Promise<ChargeOutcome>((resolve, reject) => {
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
      this.flush(batch).finally(() => {
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

  private async flush(batch: Pending[]): Promise<void> {
    this.stats.batches++;
    this.stats.charges += batch.length;
    this.stats.largestBatch = Math.max(this.stats.largestBatch, batch.length);
    try {
      const rows = await this.db.query<{ item: number; entry_id: bigint; balance_after: bigint }>(
        CHARGE_BATCH,
        [
          batch.map((p) => p.input.accountId),
          batch.map((p) => p.input.amountMicros),
          batch.map((p) => p.input.operation),
          batch.map((p) => p.input.requestId ?? null),
          batch.map((p) => p.input.keyId ?? null),
        ],
      );
      const charged = new Map(rows.map((r) => [Number(r.item), r]));
      batch.forEach((pending, i) => {
        const row = charged.get(i + 1);
        pending.resolve(
          row
            ? { ok: true, entryId: row.entry_id, balanceMicros: row.balance_after }
            : { ok: false, reason: 'INSUFFICIENT_BALANCE' },
        );
      });
    } catch (err) {
      // Nothing was committed: every charge of the batch failed, and says so.
      for (const pending of batch) pending.reject(err);
    }
  }
}
