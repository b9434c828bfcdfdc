/**
 * One kind of durable work (webhook deliveries, AI resolutions, scheduled jobs, …): rows in the
 * feature's own table, claimed with `FOR UPDATE SKIP LOCKED` and a lease. The claim statement marks
 * the rows as taken until `now + lease` and hands them to this process; a row whose lease expired
 * (its worker died, or hung) is due again and the next claim takes it. Whatever finishes an item
 * checks that it still holds the lease (`… WHERE id = $1 AND lease_token = $2`), so a worker that
 * lost its lease can never complete an item a second time.
 */

export interface QueueHandler<T> {
  /** For logs. */
  name: string;
  /** The NOTIFY channel of this work: a transaction that makes work due sends `pg_notify(channel, '')`. */
  channel: string;
  /** Items processed at once by this process (without `batching`: every item; with it: the others). */
  concurrency: number;
  /**
   * Claims up to `limit` items due at `now` in one committed statement (lease taken). With
   * `batching`, `batches` says how many batchable items to take besides (`limit` counts the others)
   * and until when they may be due: those due later wait in this process until `startsAt`.
   */
  claim(limit: number, now: Date, batches?: BatchClaim): Promise<T[]>;
  /**
   * Optional: batchable items get a room of their own, apart from `concurrency`, and may be claimed
   * a moment ahead of their time (docs/jobs.md#claims).
   */
  batching?: Batching<T>;
  /** Does one item's work. A throw is logged; the item comes back when its lease expires. */
  process(item: T): Promise<void>;
  /**
   * Optional: does the work of the items of one claim that `batchable` accepts together (one read,
   * one finishing statement for many), instead of `process` for each. They hold their slots until
   * the whole batch is done. A throw is logged; the items it did not finish come back when their
   * lease expires.
   */
  processBatch?(items: T[]): Promise<void>;
  /** Which items go to `processBatch` (default: every item, when there is a `processBatch`). */
  batchable?(item: T): boolean;
  /**
   * Optional: an item that must run alone in this process — one that came back because its last run
   * never finished (its worker died, perhaps by its own work). It waits until nothing else is in
   * flight here, and nothing else is claimed until it has run: should it kill its worker again, no
   * neighbour dies with it and spends an attempt (docs/operations.md#bounded-work). The claim should
   * hand such items out one at a time, since a claim counts an attempt.
   */
  runsAlone?(item: T): boolean;
  /**
   * The next time a claim would find an item after `now` (a scheduled time or a lease expiry), if
   * any. With `batching`, `looking` says which items the next claim may take: the others (`singles`:
   * false while their slots are all busy) and the batchable ones (`batchesAheadMs`: null while their
   * room is full; else how long before their time they are claimed).
   */
  nextDueAt(now: Date, looking?: { singles: boolean; batchesAheadMs: number | null }): Promise<Date | null>;
}

/** The batchable items one claim may take: at most `limit`, due by `until`. */
export interface BatchClaim {
  limit: number;
  until: Date;
}

/**
 * How a queue holds batchable items. None grows with the work due: a claim takes at most `claimSize`,
 * the process holds at most `capacity` (claimed: waiting for their time or running), and a claim
 * that comes back full is followed by another at once while there is room.
 */
export interface Batching<T> {
  /** Batchable items this process holds at most: waiting for their time, or running. */
  capacity: number;
  /** Batchable items one claim takes at most; a batch is never larger. */
  claimSize: number;
  /** How far ahead of their time batchable items are claimed (0: when due). */
  aheadMs: number;
  /** When an item may start: it is never run before. */
  startsAt(item: T): Date;
  /**
   * Gives back items claimed ahead that this process will not run (it is stopping): due again at
   * once for another worker, rather than after their lease.
   */
  release?(items: T[]): Promise<void>;
}

export interface QueueOptions {
  /** Longest sleep without a notification or a known due time: a safety net, not the mechanism. */
  maxSleepMs?: number;
}
