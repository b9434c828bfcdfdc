import type { Queryable } from '../db/database.js';
import type { DeliveryStatus } from './outbox.js';
import * as sql from './sql.js';

/** The status an attempt leaves its delivery in. */
export type AttemptStatus = Extract<DeliveryStatus, 'DELIVERED' | 'PENDING' | 'STOPPED' | 'CALLBACK_FAILED'>;

/** One attempt's outcome, as sql.FINISH_ATTEMPTS records it. */
export interface AttemptRecord {
  deliveryId: string;
  /** The lease the attempt was made under: recorded only while the delivery still has it. */
  leaseToken: string;
  status: AttemptStatus;
  /** The next attempt's time (PENDING); null when the delivery is finished. */
  dueAt: Date | null;
  statusCode: number | null;
  error: string | null;
  /** When the outcome came back (a finished delivery's `finished_at`). */
  finishedAt: Date;
  attemptedAt: Date;
  latencyMs: number;
}

/**
 * Records attempts in one statement; answers, by position, whether each was recorded (false: its
 * lease was lost meanwhile, another worker owns the delivery now).
 */
export async function recordAttempts(db: Queryable, records: readonly AttemptRecord[]): Promise<boolean[]> {
  const outcomes = records.map((r, i) => ({
    item: i,
    id: r.deliveryId,
    lease_token: r.leaseToken,
    status: r.status,
    due_at: r.dueAt,
    status_code: r.statusCode,
    error: r.error,
    finished_at: r.finishedAt,
    attempted_at: r.attemptedAt,
    latency_ms: r.latencyMs,
  }));
  // Dates become ISO 8601 strings, which the statement reads as `timestamptz`.
  const rows = await db.query<{ item: number }>(sql.FINISH_ATTEMPTS, [JSON.stringify(outcomes)]);
  const recorded = records.map(() => false);
  for (const row of rows) recorded[row.item] = true;
  return recorded;
}

interface Waiting {
  record: AttemptRecord;
  resolve: (recorded: boolean) => void;
  reject: (err: unknown) => void;
}

/** Most outcomes one statement records: far above a worker's concurrency, a bound on the arrays. */
const MAX_BATCH = 500;

/**
 * Records a worker's attempts many to a statement (docs/webhooks.md#operating): the outcomes that come
 * back while a statement is in flight wait for it and go together in the next one; the first, when
 * none is in flight, goes once the event loop has turned, with every outcome read meanwhile (on the
 * embedded database, which answers without the loop turning, that is what gathers them). Each caller's
 * promise resolves only once its attempt is committed, so nothing is acknowledged from memory alone:
 * a worker killed before that leaves the delivery SENDING, and its lease lapses as for any lost
 * attempt. A statement that fails is retried one outcome at a time, so one bad row fails alone.
 */
export class AttemptRecorder {
  private waiting: Waiting[] = [];
  private writing = false;

  constructor(private readonly db: Queryable) {}

  /** Records one attempt; resolves with whether it was recorded (false: the lease was lost). */
  record(record: AttemptRecord): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.waiting.push({ record, resolve, reject });
      if (this.writing) return;
      this.writing = true;
      setImmediate(() => void this.write());
    });
  }

  private async write(): Promise<void> {
    while (this.waiting.length > 0) await this.send(this.waiting.splice(0, MAX_BATCH));
    this.writing = false;
  }

  private async send(batch: Waiting[]): Promise<void> {
    let recorded: boolean[];
    try {
      recorded = await recordAttempts(
        this.db,
        batch.map((w) => w.record),
      );
    } catch (err) {
      if (batch.length === 1) (batch[0] as Waiting).reject(err);
      else for (const one of batch) await this.send([one]);
      return;
    }
    batch.forEach((w, i) => {
      w.resolve(recorded[i] === true);
    });
  }
}
