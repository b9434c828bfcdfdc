import type { Database, Queryable } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import { randomBase62 } from '../../lib/ids.js';
import type { Log } from '../../logger.js';
import type { QueueHandler } from '../../queue/queue.js';
import { recordMarketChanges } from '../../streams/index.js';
import type { Verdict } from './apply-chunk.js';
import * as sql from './derive-sql.js';
import type { ParsedEvent } from './events.js';

/**
 * The work a chunk's trades and changed markets leave for after its commit
 * (docs/markets.md#derived-after-commit): the candles of its trades and the market stream's events.
 * Ingestion writes a chunk's facts in one transaction, which also leaves a backlog row, and does this
 * work in a second one right after, which deletes the row; meanwhile the next chunk's facts are
 * written on another connection, so the database works on both at once. A chunk whose process died
 * between the two is done by the markets worker (`deriveQueueHandler`). Exactly once either way: the
 * work and the row's delete commit together, and only the transaction that deleted it does the work.
 */

/** A trade as recorded: `at` to the microsecond, as stored and compared. */
export interface RecordedTrade {
  marketId: string;
  tradeId: string;
  outcome: number;
  price: number;
  shares: string;
  at: string;
}

/** What a chunk's applied events changed: the backlog row's `changes`. */
export interface ChunkChanges {
  /** Markets whose status, book or resolution may have changed. */
  marketIds: string[];
  /** Orders filled or cancelled: their markets' books changed. */
  orderIds: string[];
  /** Trades recorded. */
  trades: RecordedTrade[];
}

/** What the applied events of a chunk changed: what its candles and the market stream need. */
export function chunkChanges(chunk: ParsedEvent[], verdicts: Verdict[]): ChunkChanges {
  const marketIds = new Set<string>();
  const changes: ChunkChanges = { marketIds: [], orderIds: [], trades: [] };
  chunk.forEach(({ event, at }, i) => {
    if (verdicts[i] !== null) return;
    if (event.type === 'market.created') marketIds.add(event.market.id);
    else if (event.type === 'order.filled' || event.type === 'order.cancelled')
      changes.orderIds.push(event.orderId);
    else if (event.type === 'trade') {
      const { marketId, tradeId, outcome, price, shares } = event;
      changes.trades.push({ marketId, tradeId, outcome, price, shares, at });
    } else if (event.type !== 'position' && event.type !== 'stake') marketIds.add(event.marketId);
  });
  changes.marketIds = [...marketIds];
  return changes;
}

export function isEmpty(changes: ChunkChanges): boolean {
  return changes.marketIds.length === 0 && changes.orderIds.length === 0 && changes.trades.length === 0;
}

/** Leaves the chunk's backlog row, in the chunk's transaction; its id. */
export async function enqueueDerived(tx: Queryable, changes: ChunkChanges): Promise<string> {
  const [row] = await tx.query<{ id: string }>(sql.ENQUEUE, [JSON.stringify(changes)]);
  if (!row) throw new Error('the backlog row was not inserted');
  return row.id;
}

/**
 * Chunks derived together at most: 5,000 trades with ingestion's chunks of 1,000. Together, their
 * candles are summed once (a market's hour and day candles, and the minutes they share, one upsert
 * each instead of one per chunk) and each changed market's stream state read and written once: on
 * a feed of 200 markets, 5 chunks derived together cost about what 2 cost one by one
 * (docs/performance.md#derived-after-commit). Bounded, so that one transaction does not hold the
 * market stream's lock for long.
 */
const BATCH_CHUNKS = 5;

/**
 * The derived work of one ingestion's chunks: in pieces of BATCH_CHUNKS chunks, each derived in one
 * transaction beside the next chunks' own (a body of many chunks), the rest when the chunks are all
 * applied. One piece at a time, in the chunks' order, so the stream's events keep it. A failure stops
 * the lane; the chunks left are the worker's (their backlog rows stay), and `done` throws it.
 */
export class DeriveLane {
  private readonly waiting: { id: string; changes: ChunkChanges }[] = [];
  private running: Promise<void> | null = null;
  private failure: { error: unknown } | null = null;
  /** Every chunk is applied: what waits is derived, whatever its number. */
  private finishing = false;

  constructor(private readonly db: Database) {}

  add(id: string, changes: ChunkChanges): void {
    this.waiting.push({ id, changes });
    if (this.waiting.length >= BATCH_CHUNKS) this.start();
  }

  /** Derives what is left and waits for it; throws the failure that stopped the lane, if any. */
  async done(): Promise<void> {
    this.finishing = true;
    this.start();
    while (this.running) await this.running;
    if (this.failure) throw this.failure.error;
  }

  /** Runs the lane unless it runs or has failed; `running` is cleared when that run ends, not before. */
  private start(): void {
    if (this.running || this.failure) return;
    const run = this.run();
    this.running = run;
    void run.finally(() => {
      if (this.running === run) this.running = null;
    });
  }

  private async run(): Promise<void> {
    try {
      while (!this.failure && this.waiting.length >= (this.finishing ? 1 : BATCH_CHUNKS)) {
        const batch = this.waiting.splice(0, BATCH_CHUNKS);
        await this.db.transaction(async (tx) => {
          const taken = new Set(
            (await tx.query<{ id: string }>(sql.TAKE, [batch.map((b) => b.id)])).map((r) => r.id),
          );
          const mine = batch.filter((b) => taken.has(b.id)).map((b) => b.changes);
          if (mine.length > 0) await applyDerived(tx, merged(mine));
        });
      }
    } catch (error) {
      this.failure = { error };
    }
  }
}

/** Several chunks' changes as one: their markets once, their orders and trades all. */
export function merged(all: ChunkChanges[]): ChunkChanges {
  if (all.length === 1 && all[0]) return all[0];
  return {
    marketIds: [...new Set(all.flatMap((c) => c.marketIds))],
    orderIds: all.flatMap((c) => c.orderIds),
    trades: all.flatMap((c) => c.trades),
  };
}

/** The candles of the trades, then the market stream's events (its writer comes last before commit). */
export async function applyDerived(tx: Queryable, changes: ChunkChanges): Promise<void> {
  const { trades } = changes;
  if (trades.length > 0) {
    await tx.query(sql.UPSERT_CANDLES, [
      trades.map((t) => t.tradeId),
      trades.map((t) => t.marketId),
      trades.map((t) => t.outcome),
      trades.map((t) => t.price),
      trades.map((t) => t.shares),
      trades.map((t) => t.at),
    ]);
  }
  await recordMarketChanges(tx, {
    marketIds: changes.marketIds,
    orderIds: changes.orderIds,
    trades: trades.map(({ marketId, tradeId, outcome, price, shares, at }) => ({
      marketId,
      tradeId,
      outcome,
      price,
      shares,
      at: new Date(Date.parse(at)).toISOString(),
    })),
  });
}

/**
 * How long a worker holds a claimed row: far longer than a chunk's work (milliseconds), so a lease
 * lapses only when its worker died; its transaction then rolled back, and the row is claimed again.
 */
const LEASE_MS = 60_000;

export interface ClaimedBacklog {
  id: string;
  changes: string;
  lease_token: string;
  attempts: number;
}

export interface DeriveDeps {
  db: Database;
  clock: Clock;
  log: Log;
  settings: { deriveAfterMs: number };
}

/**
 * The markets worker's share: backlog rows the ingestion that wrote them did not take within
 * `deriveAfterMs` (its process died, or its second transaction failed), one at a time, oldest first,
 * so the stream's events keep the chunks' order.
 */
export function deriveQueueHandler(deps: DeriveDeps): QueueHandler<ClaimedBacklog> {
  const { db, settings } = deps;
  return {
    name: 'market-derive',
    channel: sql.DERIVE_CHANNEL,
    concurrency: 1,
    claim: (limit, now) =>
      db.query<ClaimedBacklog>(sql.CLAIM, [now, limit, randomBase62(16), LEASE_MS, settings.deriveAfterMs]),
    async process(row) {
      await db.transaction(async (tx) => {
        const taken = await tx.query(sql.TAKE_LEASED, [row.id, row.lease_token]);
        if (taken.length > 0) await applyDerived(tx, JSON.parse(row.changes) as ChunkChanges);
      });
      deps.log.info({ backlogId: row.id, attempts: row.attempts }, 'market chunk derived by the worker');
    },
    async nextDueAt() {
      const [row] = await db.query<{ next: Date | null }>(sql.NEXT_DUE, [settings.deriveAfterMs]);
      return row?.next ?? null;
    },
  };
}
