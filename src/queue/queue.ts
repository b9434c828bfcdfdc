import type { Database } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../logger.js';
import { metrics } from '../metrics/metrics.js';

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
  /** Items processed at once by this process. */
  concurrency: number;
  /** Claims up to `limit` items due at `now` in one committed statement (lease taken). */
  claim(limit: number, now: Date): Promise<T[]>;
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
  /** The next time an item becomes due after `now` (a scheduled time or a lease expiry), if any. */
  nextDueAt(now: Date): Promise<Date | null>;
}

/** What runs at once: one item, or the batchable items of one claim; or one item with nothing beside it. */
type Unit<T> = { single: T } | { batch: T[] } | { alone: T };

export interface QueueOptions {
  /** Longest sleep without a notification or a known due time: a safety net, not the mechanism. */
  maxSleepMs?: number;
}

const DEFAULT_MAX_SLEEP_MS = 30_000;
const ERROR_BACKOFF_MS = 1000;

/**
 * Runs a QueueHandler in this process. It wakes on the channel's notifications (new work is picked
 * up as soon as the transaction that made it commits), when an item finishes (room for the next),
 * and at the next due time the table reports — never on a coarse poll.
 */
export class WorkQueue<T> {
  private inFlight = 0;
  private readonly running = new Set<Promise<void>>();
  /** Items claimed to run alone, waiting for the items in flight to finish; then one at a time. */
  private readonly waitingAlone: T[] = [];
  private aloneRunning = false;
  private pumping = false;
  private again = false;
  private stopped = true;
  private timer: NodeJS.Timeout | undefined;
  private unlisten: (() => Promise<void>) | undefined;
  private readonly maxSleepMs: number;

  constructor(
    private readonly handler: QueueHandler<T>,
    private readonly deps: { db: Database; clock: Clock; log: Log },
    options: QueueOptions = {},
  ) {
    this.maxSleepMs = options.maxSleepMs ?? DEFAULT_MAX_SLEEP_MS;
  }

  get name(): string {
    return this.handler.name;
  }

  /** Starts listening, then looks for due work at once. */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    this.unlisten = await this.deps.db.listen(this.handler.channel, () => this.wake());
    this.wake();
  }

  /** Stops claiming, and waits for the items in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.unlisten?.();
    this.unlisten = undefined;
    await Promise.all(this.running);
  }

  /** Asks for a look at the table soon; wake-ups that arrive while one runs fold into one more. */
  wake(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    void this.pump().finally(() => {
      this.pumping = false;
    });
  }

  /**
   * Claims and processes everything due at the clock's `now`, waiting for it to finish, until a claim
   * finds nothing: for tests and tools that drive the clock by hand. Returns how many it processed.
   */
  async drain(): Promise<number> {
    let processed = 0;
    for (;;) {
      const items = await this.handler.claim(this.handler.concurrency, this.deps.clock.now());
      metrics.workItems(this.handler.name, 'claimed', items.length);
      if (items.length === 0) return processed;
      processed += items.length;
      const units = this.units(items);
      await Promise.all(units.filter((unit) => !('alone' in unit)).map((unit) => this.run(unit)));
      for (const unit of units) if ('alone' in unit) await this.run(unit);
    }
  }

  /** While an item is to run alone, or runs, nothing else is claimed. */
  private holdingAlone(): boolean {
    return this.aloneRunning || this.waitingAlone.length > 0;
  }

  /** Starts the next item that runs alone, once nothing else is in flight. */
  private startAlone(): void {
    if (this.aloneRunning || this.inFlight > 0) return;
    const item = this.waitingAlone.shift();
    if (item !== undefined) this.launch({ alone: item });
  }

  private async pump(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    try {
      do {
        this.again = false;
        this.startAlone();
        while (!this.stopped && !this.holdingAlone() && this.inFlight < this.handler.concurrency) {
          const room = this.handler.concurrency - this.inFlight;
          const items = await this.handler.claim(room, this.deps.clock.now());
          metrics.workItems(this.handler.name, 'claimed', items.length);
          for (const unit of this.units(items)) {
            if ('alone' in unit) this.waitingAlone.push(unit.alone);
            else this.launch(unit);
          }
          this.startAlone();
          if (items.length < room) break;
        }
      } while (this.again && !this.stopped);
      await this.sleepUntilNextDue();
    } catch (err) {
      metrics.workClaimFailed(this.handler.name);
      this.deps.log.error({ err, queue: this.handler.name }, 'work queue claim failed');
      this.schedule(ERROR_BACKOFF_MS);
    }
  }

  /**
   * The claimed items as units of work: those that run alone, each by itself; the batchable ones in
   * one batch; each other one as a single.
   */
  private units(items: T[]): Unit<T>[] {
    const { processBatch, batchable, runsAlone } = this.handler;
    const batch: T[] = [];
    const units: Unit<T>[] = [];
    for (const item of items) {
      if (runsAlone?.(item)) units.push({ alone: item });
      else if (processBatch && (!batchable || batchable(item))) batch.push(item);
      else units.push({ single: item });
    }
    if (batch.length > 0) units.unshift({ batch });
    return units;
  }

  private launch(unit: Unit<T>): void {
    const size = 'batch' in unit ? unit.batch.length : 1;
    this.inFlight += size;
    if ('alone' in unit) this.aloneRunning = true;
    metrics.workInFlight(this.handler.name, this.inFlight);
    const run = this.run(unit).finally(() => {
      if ('alone' in unit) this.aloneRunning = false;
      this.inFlight -= size;
      metrics.workInFlight(this.handler.name, this.inFlight);
      this.running.delete(run);
      this.wake();
    });
    this.running.add(run);
  }

  private async run(unit: Unit<T>): Promise<void> {
    const size = 'batch' in unit ? unit.batch.length : 1;
    try {
      if ('batch' in unit) await this.handler.processBatch?.(unit.batch);
      else await this.handler.process('alone' in unit ? unit.alone : unit.single);
      metrics.workItems(this.handler.name, 'done', size);
    } catch (err) {
      metrics.workItems(this.handler.name, 'failed', size);
      this.deps.log.error({ err, queue: this.handler.name }, 'work item failed; retried after its lease');
    }
  }

  private async sleepUntilNextDue(): Promise<void> {
    if (this.stopped) return;
    // With every slot busy, or an item to run alone, a finishing item wakes the queue; otherwise
    // sleep until the next due time.
    if (this.inFlight >= this.handler.concurrency || this.holdingAlone()) return;
    const now = this.deps.clock.now();
    const next = await this.handler.nextDueAt(now);
    const delay = next === null ? this.maxSleepMs : next.getTime() - now.getTime();
    this.schedule(Math.min(Math.max(delay, 1), this.maxSleepMs));
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.wake(), delayMs);
    this.timer.unref();
  }
}
