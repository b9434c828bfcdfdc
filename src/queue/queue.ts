import type { Database } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../logger.js';
import { metrics } from '../metrics/metrics.js';
import type { Batching, QueueHandler, QueueOptions } from './handler.js';

export type { BatchClaim, Batching, QueueHandler, QueueOptions } from './handler.js';

/** What runs at once: one item, or the batchable items of one claim; or one item with nothing beside it. */
type Unit<T> = { single: T } | { batch: T[] } | { alone: T };

const DEFAULT_MAX_SLEEP_MS = 30_000;
const ERROR_BACKOFF_MS = 1000;

/**
 * Runs a QueueHandler in this process. It wakes on the channel's notifications (new work is picked
 * up as soon as the transaction that made it commits), when an item finishes (room for the next),
 * and at the next due time the table reports — never on a coarse poll.
 * With `batching`, batchable items have a room of their own and are claimed ahead of their time,
 * waiting in one timer per due instant, never started before it (docs/jobs.md#claims).
 */
export class WorkQueue<T> {
  private inFlight = 0;
  private readonly running = new Set<Promise<void>>();
  /** Items claimed to run alone, waiting for the items in flight to finish; then one at a time. */
  private readonly waitingAlone: T[] = [];
  private aloneRunning = false;
  /** Batchable items held (`batching`): waiting for their time, ready, or running. */
  private held = 0;
  private batchesRunning = 0; // of those, the ones running
  /** Items claimed ahead, by the instant (ms) they may start, with its timer. */
  private readonly waiting = new Map<number, { items: T[]; timer: NodeJS.Timeout }>();
  /** Batches whose time came while an item runs alone (or waits to): they start after it. */
  private readonly ready: T[][] = [];
  private pumping = false;
  private again = false;
  private wakePending = false;
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

  /** Stops claiming, gives back the items claimed ahead not started (`release`), waits for the rest. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    const unstarted: T[] = [...this.ready.splice(0).flat()];
    for (const [, group] of this.waiting) {
      clearTimeout(group.timer);
      unstarted.push(...group.items);
    }
    this.waiting.clear();
    this.held -= unstarted.length;
    await this.unlisten?.();
    this.unlisten = undefined;
    if (unstarted.length > 0) {
      await this.handler.batching?.release?.(unstarted).catch((err: unknown) => {
        this.deps.log.error(
          { err, queue: this.handler.name },
          'giving back unstarted work failed; back after its lease',
        );
      });
    }
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
   * A finished item makes room: the look at the table waits for the event loop to turn, so the items
   * that finish together (a webhook worker's outcomes recorded in one statement) make room for one
   * claim of them all, not a claim of one and then one of the rest.
   */
  private wakeAfterFinishing(): void {
    if (this.wakePending) return;
    this.wakePending = true;
    setImmediate(() => {
      this.wakePending = false;
      this.wake();
    });
  }

  /**
   * Claims and processes everything due at the clock's `now`, waiting for it to finish, until a claim
   * finds nothing: for tests and tools that drive the clock by hand. Returns how many it processed.
   * Nothing is claimed ahead.
   */
  async drain(): Promise<number> {
    let processed = 0;
    for (;;) {
      const now = this.deps.clock.now();
      const { batching } = this.handler;
      const items = batching
        ? await this.handler.claim(this.handler.concurrency, now, { limit: batching.claimSize, until: now })
        : await this.handler.claim(this.handler.concurrency, now);
      metrics.workItems(this.handler.name, 'claimed', items.length);
      if (items.length === 0) return processed;
      processed += items.length;
      const units = this.units(items);
      await Promise.all(units.filter((unit) => !('alone' in unit)).map((unit) => this.run(unit)));
      for (const unit of units) if ('alone' in unit) await this.run(unit);
    }
  }

  /** While an item is to run alone, or runs, nothing else is claimed or started. */
  private holdingAlone(): boolean {
    return this.aloneRunning || this.waitingAlone.length > 0;
  }

  /** Starts the next item that runs alone, once nothing else is in flight. */
  private startAlone(): void {
    if (this.aloneRunning || this.inFlight > 0 || this.batchesRunning > 0) return;
    const item = this.waitingAlone.shift();
    if (item !== undefined) this.launch({ alone: item });
  }

  private async pump(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const { batching, concurrency } = this.handler;
    try {
      do {
        this.again = false;
        this.startAlone();
        this.startReady();
        while (!this.stopped && !this.holdingAlone()) {
          const room = concurrency - this.inFlight;
          const batchRoom = batching ? Math.min(batching.claimSize, batching.capacity - this.held) : 0;
          if (room <= 0 && batchRoom <= 0) break;
          const now = this.deps.clock.now();
          const items = batching
            ? await this.handler.claim(Math.max(room, 0), now, {
                limit: Math.max(batchRoom, 0),
                until: new Date(now.getTime() + batching.aheadMs),
              })
            : await this.handler.claim(room, now);
          metrics.workItems(this.handler.name, 'claimed', items.length);
          let others = 0;
          let batched = 0;
          for (const unit of this.units(items)) {
            if ('alone' in unit) {
              this.waitingAlone.push(unit.alone);
              others++;
            } else if ('single' in unit) {
              this.launch(unit);
              others++;
            } else if (batching) {
              batched += unit.batch.length;
              this.hold(unit.batch, now);
            } else this.launch(unit);
          }
          this.startAlone();
          // A full claim is followed by another at once: more may be due than one claim takes.
          const full = batching
            ? (room > 0 && others >= room) || (batchRoom > 0 && batched >= batchRoom)
            : items.length >= room;
          if (!full) break;
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
   * Holds batchable items claimed at `now`: those due start at once, the others wait for their
   * instant, with the items of other claims due at the same one.
   */
  private hold(items: T[], now: Date): void {
    const batching = this.handler.batching as Batching<T>;
    this.held += items.length;
    const due: T[] = [];
    for (const item of items) {
      const at = batching.startsAt(item).getTime();
      if (at <= now.getTime()) {
        due.push(item);
        continue;
      }
      const group = this.waiting.get(at);
      if (group) group.items.push(item);
      else this.waiting.set(at, { items: [item], timer: this.arm(at, at - now.getTime()) });
    }
    if (due.length > 0) {
      this.ready.push(due);
      this.startReady();
    }
  }

  private arm(at: number, delayMs: number): NodeJS.Timeout {
    const timer = setTimeout(() => this.fire(at), Math.max(delayMs, 0));
    timer.unref();
    return timer;
  }

  /** The instant `at` came: its items start, in batches of at most a claim's size; never before it. */
  private fire(at: number): void {
    const group = this.waiting.get(at);
    if (!group || this.stopped) return;
    const early = at - this.deps.clock.now().getTime();
    if (early > 0) {
      // Timers may fire a little before the wall clock reaches their time: never start early.
      group.timer = this.arm(at, early);
      return;
    }
    this.waiting.delete(at);
    const size = (this.handler.batching as Batching<T>).claimSize;
    for (let i = 0; i < group.items.length; i += size) this.ready.push(group.items.slice(i, i + size));
    this.startReady();
  }

  /** Starts the batches whose time came, unless an item runs alone (or waits to): then after it. */
  private startReady(): void {
    if (this.holdingAlone()) return;
    for (let batch = this.ready.shift(); batch; batch = this.ready.shift()) this.launchBatch(batch);
  }

  private launchBatch(items: T[]): void {
    this.batchesRunning += items.length;
    metrics.workInFlight(this.handler.name, this.inFlight + this.batchesRunning);
    const run = this.run({ batch: items }).finally(() => {
      this.batchesRunning -= items.length;
      this.held -= items.length;
      metrics.workInFlight(this.handler.name, this.inFlight + this.batchesRunning);
      this.running.delete(run);
      this.wakeAfterFinishing();
    });
    this.running.add(run);
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
    metrics.workInFlight(this.handler.name, this.inFlight + this.batchesRunning);
    const run = this.run(unit).finally(() => {
      if ('alone' in unit) this.aloneRunning = false;
      this.inFlight -= size;
      metrics.workInFlight(this.handler.name, this.inFlight + this.batchesRunning);
      this.running.delete(run);
      this.wakeAfterFinishing();
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
    // sleep until the next due time (of the items there is room for).
    if (this.holdingAlone()) return;
    const { batching } = this.handler;
    const singles = this.inFlight < this.handler.concurrency;
    const batches = batching !== undefined && this.held < batching.capacity;
    if (!singles && !batches) return;
    const now = this.deps.clock.now();
    const next = batching
      ? await this.handler.nextDueAt(now, { singles, batchesAheadMs: batches ? batching.aheadMs : null })
      : await this.handler.nextDueAt(now);
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
