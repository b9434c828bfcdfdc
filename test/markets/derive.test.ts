import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Queryable } from '../../src/db/database.js';
import { ManualClock } from '../../src/lib/clock.js';
import { createLogger } from '../../src/logger.js';
import { applyChunk, byPhaseThenTime } from '../../src/markets/ingest/apply-chunk.js';
import {
  type ChunkChanges,
  chunkChanges,
  DeriveLane,
  deriveQueueHandler,
  enqueueDerived,
} from '../../src/markets/ingest/derive.js';
import { type ParsedEvent, parseEventLine } from '../../src/markets/ingest/events.js';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import { WorkQueue } from '../../src/queue/queue.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { type Event, event, marketCreated, ndjson, wallet } from './events.js';

/**
 * A chunk's derived work (docs/markets.md#derived-after-commit): the candles of its trades and the
 * market stream's events, written by a second transaction after the chunk's own — by the ingestion
 * that applied it, or, when that never happened, by the markets worker; exactly once either way.
 */

let database: TestDatabase;
const log = createLogger({ logLevel: 'silent' });
const START = Date.parse('2026-03-02T10:00:00Z');

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});

let market = 0;
let marketId = '';
beforeEach(async () => {
  market += 1;
  marketId = `derive-${market}`;
  const report = await ingestText(database.db, ndjson([marketCreated({ id: marketId })]));
  expect(report).toMatchObject({ applied: 1, refused: 0 });
});

/** Trades over two hours of the test's market, late ones among them, some at the same time. */
function trades(count: number, seed: number): Event[] {
  return Array.from({ length: count }, (_, i) => {
    const at = START + ((i * 7_919 + seed * 104_729) % 7_200_000);
    return event('trade', new Date(at - (at % 1000)).toISOString(), {
      marketId,
      tradeId: `${marketId}-s${seed}-t${i}`,
      outcome: i % 3 === 0 ? 1 : 0,
      price: 1 + ((i * 37 + seed) % 9_999),
      shares: String(1 + ((i * 1_000_003) % 5_000_000)),
      buyer: wallet(`b${i % 7}`),
      seller: wallet(`s${i % 5}`),
    });
  });
}

function parsed(events: Event[]): ParsedEvent[] {
  return events
    .map((e, i) => {
      const result = parseEventLine(JSON.stringify(e), i + 1);
      if (!result.ok) throw new Error(JSON.stringify(result.problems));
      return result.parsed;
    })
    .sort(byPhaseThenTime);
}

/** Applies a chunk and leaves its backlog row, as a process that died before its derived work does. */
async function applyOnly(events: Event[]): Promise<{ id: string; changes: ChunkChanges }> {
  const chunk = parsed(events);
  return database.db.transaction(async (tx) => {
    const verdicts = await applyChunk(tx, chunk);
    expect(verdicts.every((v) => v === null)).toBe(true);
    const changes = chunkChanges(chunk, verdicts);
    return { id: await enqueueDerived(tx, changes), changes };
  });
}

/** Candles (1 m, 1 h, 1 d) that differ from an aggregate of the market's trades. */
async function candlesWrong(q: Queryable = database.db): Promise<number> {
  const [row] = await q.query<{ n: number }>(
    `WITH ref AS (
       SELECT outcome_index, w.width,
              date_bin(make_interval(secs => w.width), at, timestamptz '1970-01-01 00:00:00+00') AS bucket,
              (array_agg(price ORDER BY at, trade_id))[1] AS open, max(price) AS high, min(price) AS low,
              (array_agg(price ORDER BY at DESC, trade_id DESC))[1] AS close, sum(shares) AS volume,
              count(*) AS trades
         FROM market_trades CROSS JOIN (VALUES (60), (3600), (86400)) AS w (width)
        WHERE market_id = $1
        GROUP BY 1, 2, 3)
     SELECT count(*)::int AS n
       FROM ref FULL JOIN (SELECT * FROM market_candles WHERE market_id = $1) c
            USING (outcome_index, width, bucket)
      WHERE (ref.open, ref.high, ref.low, ref.close, ref.volume, ref.trades)
            IS DISTINCT FROM (c.open, c.high, c.low, c.close, c.volume, c.trades)`,
    [marketId],
  );
  return row?.n ?? -1;
}

async function counts() {
  const [row] = await database.db.query<{
    trades: number;
    candles: number;
    streamed: number;
    backlog: number;
  }>(
    `SELECT (SELECT count(*) FROM market_trades WHERE market_id = $1)::int AS trades,
            (SELECT count(*) FROM market_candles WHERE market_id = $1)::int AS candles,
            (SELECT count(*) FROM market_stream_events WHERE market_id = $1 AND kind = 'trade')::int AS streamed,
            (SELECT count(*) FROM market_derive_backlog)::int AS backlog`,
    [marketId],
  );
  return row;
}

function worker(clock: ManualClock, deriveAfterMs = 10_000) {
  const handler = deriveQueueHandler({ db: database.db, clock, log, settings: { deriveAfterMs } });
  return { handler, queue: new WorkQueue(handler, { db: database.db, clock, log }) };
}

describe('derived after commit', () => {
  it('ingestion returns with every chunk derived: candles equal the trades, one stream event each', async () => {
    const events = trades(2_600, 1); // three chunks of ingestion
    const report = await ingestText(database.db, ndjson(events));
    expect(report).toMatchObject({ applied: 2_600, refused: 0 });
    expect(await counts()).toMatchObject({ trades: 2_600, streamed: 2_600, backlog: 0 });
    expect(await candlesWrong()).toBe(0);
  });

  it('a chunk its ingestion never derived is derived by the worker once, after MARKETS_DERIVE_AFTER_MS', async () => {
    const left = await applyOnly(trades(300, 2));
    expect(await counts()).toMatchObject({ trades: 300, candles: 0, streamed: 0, backlog: 1 });

    const clock = new ManualClock(new Date());
    const { queue } = worker(clock);
    expect(await queue.drain()).toBe(0); // still the ingestion's to do
    clock.set(new Date(clock.now().getTime() + 10_001));
    expect(await queue.drain()).toBe(1);
    expect(await counts()).toMatchObject({ trades: 300, streamed: 300, backlog: 0 });
    expect(await candlesWrong()).toBe(0);

    // Its ingestion coming back late finds nothing left to do: nothing counted twice.
    const lane = new DeriveLane(database.db);
    lane.add(left.id, left.changes);
    await lane.done();
    expect(await queue.drain()).toBe(0);
    expect(await counts()).toMatchObject({ streamed: 300, backlog: 0 });
    expect(await candlesWrong()).toBe(0);
  });

  it('a row its ingestion took is not the worker’s, and a row the worker holds is not the ingestion’s', async () => {
    const first = await applyOnly(trades(120, 3));
    const clock = new ManualClock(new Date(Date.now() + 60_000));
    const { handler } = worker(clock);
    const [claimed] = await handler.claim(1, clock.now());
    expect(claimed?.id).toBe(first.id);

    const lane = new DeriveLane(database.db);
    lane.add(first.id, first.changes);
    await lane.done(); // the worker holds it: the ingestion does nothing
    expect(await counts()).toMatchObject({ candles: 0, streamed: 0, backlog: 1 });
    if (!claimed) throw new Error('not claimed');
    await handler.process(claimed);
    expect(await counts()).toMatchObject({ streamed: 120, backlog: 0 });
    expect(await candlesWrong()).toBe(0);

    const second = await applyOnly(trades(80, 4));
    const again = new DeriveLane(database.db);
    again.add(second.id, second.changes);
    await again.done();
    expect(await handler.claim(1, clock.now())).toEqual([]);
    expect(await counts()).toMatchObject({ streamed: 200, backlog: 0 });
    expect(await candlesWrong()).toBe(0);
  });

  it('a lease that lapsed goes to the next claim; the worker that lost it can no longer finish', async () => {
    await applyOnly(trades(50, 5));
    const clock = new ManualClock(new Date(Date.now() + 60_000));
    const { handler } = worker(clock);
    const [lost] = await handler.claim(1, clock.now());
    expect(lost?.attempts).toBe(1);
    clock.set(new Date(clock.now().getTime() + 30_000));
    expect(await handler.claim(1, clock.now())).toEqual([]); // held
    clock.set(new Date(clock.now().getTime() + 31_000));
    const [next] = await handler.claim(1, clock.now());
    expect(next).toMatchObject({ id: lost?.id, attempts: 2 });
    if (!lost || !next) throw new Error('not claimed');
    await handler.process(lost);
    expect(await counts()).toMatchObject({ candles: 0, streamed: 0, backlog: 1 });
    await handler.process(next);
    expect(await counts()).toMatchObject({ streamed: 50, backlog: 0 });
    expect(await candlesWrong()).toBe(0);
  });

  it('chunks derived together: candles equal the trades, stream events in order piece by piece', async () => {
    const events = trades(400, 6);
    const apart = [] as { id: string; changes: ChunkChanges }[];
    for (let i = 0; i < 400; i += 50) apart.push(await applyOnly(events.slice(i, i + 50)));
    const lane = new DeriveLane(database.db); // 8 chunks: a piece of 5, then the 3 left
    for (const chunk of apart) lane.add(chunk.id, chunk.changes);
    await lane.done();
    expect(await counts()).toMatchObject({ trades: 400, streamed: 400, backlog: 0 });
    expect(await candlesWrong()).toBe(0);
    // A piece's trades in (at, trade id) order, the pieces in the chunks' order.
    const streamed = await database.db.query<{ data: { tradeId: string } }>(
      `SELECT data::json AS data FROM market_stream_events WHERE market_id = $1 AND kind = 'trade' ORDER BY id`,
      [marketId],
    );
    const order = (piece: typeof apart) =>
      piece
        .flatMap((chunk) => chunk.changes.trades)
        .sort((a, b) => a.at.localeCompare(b.at) || (a.tradeId < b.tradeId ? -1 : 1))
        .map((t) => t.tradeId);
    expect(streamed.map((r) => r.data.tradeId)).toEqual([
      ...order(apart.slice(0, 5)),
      ...order(apart.slice(5)),
    ]);
  });

  it('a failed piece stops the lane: done() throws, and the chunks it left are derived by the worker', async () => {
    const first = await applyOnly(trades(60, 7));
    const rest = [] as { id: string; changes: ChunkChanges }[];
    for (let k = 8; k < 14; k++) rest.push(await applyOnly(trades(20, k)));
    const lane = new DeriveLane(database.db);
    // The first piece cannot be written (a time PostgreSQL refuses): its transaction rolls back.
    const broken = {
      ...first.changes,
      trades: first.changes.trades.map((t) => ({ ...t, at: 'not a time' })),
    };
    lane.add(first.id, broken);
    for (const chunk of rest) lane.add(chunk.id, chunk.changes);
    await expect(lane.done()).rejects.toThrow();
    expect(await counts()).toMatchObject({ trades: 180, candles: 0, streamed: 0, backlog: 7 });

    const clock = new ManualClock(new Date(Date.now() + 60_000));
    expect(await worker(clock).queue.drain()).toBe(7);
    expect(await counts()).toMatchObject({ streamed: 180, backlog: 0 });
    expect(await candlesWrong()).toBe(0);
  });
});
