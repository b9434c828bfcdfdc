import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { PostgresDatabase } from '../../src/db/postgres.js';
import { type Clock, ManualClock, systemClock } from '../../src/lib/clock.js';
import { randomBase62 } from '../../src/lib/ids.js';
import { silentLog } from '../../src/logger.js';
import { registry } from '../../src/metrics/metrics.js';
import { type QueueHandler, WorkQueue } from '../../src/queue/queue.js';
import { createTestDatabase, type TestDatabase, usingPostgres } from '../helpers/db.js';

/**
 * The work-queue runner on a toy table shaped like every feature's: claimed with FOR UPDATE SKIP
 * LOCKED and a lease, completed only by the holder of the lease, woken by NOTIFY.
 */

const TABLE = `
  CREATE TABLE toy_work (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    due_at      timestamptz NOT NULL,
    status      text NOT NULL DEFAULT 'pending',
    lease_until timestamptz,
    lease_token text,
    attempts    integer NOT NULL DEFAULT 0,
    done_by     text,
    done_count  integer NOT NULL DEFAULT 0
  )`;

const CLAIM = `
  UPDATE toy_work w SET status = 'running', lease_until = $1::timestamptz + interval '5 seconds',
         lease_token = $3, attempts = w.attempts + 1
   WHERE w.id IN (SELECT id FROM toy_work
                   WHERE (status = 'pending' AND due_at <= $1) OR (status = 'running' AND lease_until <= $1)
                   ORDER BY due_at LIMIT $2 FOR UPDATE SKIP LOCKED)
  RETURNING w.id, w.lease_token`;

const NEXT_DUE = `
  SELECT min(CASE WHEN status = 'pending' THEN due_at ELSE lease_until END) AS next
    FROM toy_work WHERE status IN ('pending', 'running')`;

interface Item {
  id: bigint;
  lease_token: string;
}

function toyQueue(
  db: Database,
  clock: Clock,
  name: string,
  work: (item: Item) => Promise<void> = async () => {},
  extra: Partial<QueueHandler<Item>> = {},
): { queue: WorkQueue<Item>; processed: bigint[] } {
  const processed: bigint[] = [];
  const handler: QueueHandler<Item> = {
    name,
    channel: 'toy_work',
    concurrency: 8,
    claim: (limit, now) => db.query<Item>(CLAIM, [now, limit, randomBase62(12)]),
    async process(item) {
      await work(item);
      const done = await db.query(
        `UPDATE toy_work SET status = 'done', done_by = $3, done_count = done_count + 1
          WHERE id = $1 AND lease_token = $2 RETURNING id`,
        [item.id, item.lease_token, name],
      );
      if (done.length === 1) processed.push(item.id);
    },
    async nextDueAt() {
      const [row] = await db.query<{ next: Date | null }>(NEXT_DUE);
      return row?.next ?? null;
    },
    ...extra,
  };
  // A safety-net sleep far longer than any test: only notifications and due times can wake a runner.
  return { queue: new WorkQueue(handler, { db, clock, log: silentLog }, { maxSleepMs: 600_000 }), processed };
}

async function addWork(db: Database, dueAt: Date, count = 1): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query('INSERT INTO toy_work (due_at) SELECT $1 FROM generate_series(1, $2::int)', [
      dueAt,
      count,
    ]);
    await tx.query(`SELECT pg_notify('toy_work', '')`);
  });
}

async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 10));
}

async function pendingCount(db: Database): Promise<number> {
  const [row] = await db.query<{ n: bigint }>(`SELECT count(*) AS n FROM toy_work WHERE status <> 'done'`);
  return Number(row?.n ?? 0);
}

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
  await database.db.exec(TABLE);
});
afterAll(async () => {
  await database.close();
});

describe('work queue', () => {
  it('wakes on the notification of the transaction that adds work', async () => {
    const db = database.db;
    const { queue, processed } = toyQueue(db, systemClock, 'a');
    await queue.start();
    await addWork(db, new Date(Date.now() - 1000));
    await until(async () => processed.length === 1);
    await queue.stop();
    expect(await pendingCount(db)).toBe(0);
  });

  it('sleeps until the next due time and never runs work early', async () => {
    const db = database.db;
    const seen: number[] = [];
    const { queue, processed } = toyQueue(db, systemClock, 'b', async () => {
      seen.push(Date.now());
    });
    await queue.start();
    const due = new Date(Date.now() + 300);
    await addWork(db, due);
    await until(async () => processed.length === 1);
    await queue.stop();
    expect(seen[0]).toBeGreaterThanOrEqual(due.getTime());
  });

  it('a worker that lost its lease cannot complete the item; the next holder does, once', async () => {
    const db = database.db;
    await db.query(`UPDATE toy_work SET status = 'done'`);
    const clock = new ManualClock(new Date());
    await addWork(db, clock.now());
    let release: () => void = () => {};
    const stuck = new Promise<void>((resolve) => {
      release = resolve;
    });
    const first = toyQueue(db, clock, 'stuck', () => stuck);
    const draining = first.queue.drain();
    await until(async () => {
      const [row] = await db.query<{ status: string }>(
        `SELECT status FROM toy_work WHERE status = 'running'`,
      );
      return row !== undefined;
    });
    const second = toyQueue(db, clock, 'second');
    expect(await second.queue.drain()).toBe(0); // still leased
    clock.advance(5001);
    expect(await second.queue.drain()).toBe(1);
    release();
    await draining;
    expect(first.processed).toEqual([]);
    const rows = await db.query<{ done_by: string; done_count: number; attempts: number }>(
      `SELECT done_by, done_count, attempts FROM toy_work WHERE done_by IS NOT NULL AND done_by IN ('stuck', 'second')`,
    );
    expect(rows).toEqual([{ done_by: 'second', done_count: 1, attempts: 2 }]);
  });

  it('two runners on separate connections share 300 items: each done exactly once', async () => {
    const db = database.db;
    await db.query(`UPDATE toy_work SET status = 'done'`);
    // On PostgreSQL the second runner has its own pool and listening connection, as another process would.
    const other: Database = usingPostgres ? new PostgresDatabase(database.location, { poolSize: 4 }) : db;
    const a = toyQueue(db, systemClock, 'one');
    const b = toyQueue(other, systemClock, 'two');
    await a.queue.start();
    await b.queue.start();
    await addWork(db, new Date(Date.now() - 1000), 300);
    await until(async () => (await pendingCount(db)) === 0);
    await a.queue.stop();
    await b.queue.stop();
    if (other !== db) await other.close();
    expect(a.processed.length + b.processed.length).toBe(300);
    const [counts] = await db.query<{ over: bigint }>(
      `SELECT count(*) FILTER (WHERE done_count <> 1) AS over FROM toy_work WHERE done_by IN ('one', 'two')`,
    );
    expect(counts?.over).toBe(0n);
    expect(new Set([...a.processed, ...b.processed]).size).toBe(300);
  });

  it('items that finish together make room for one claim of them all, not a claim of one and then the rest', async () => {
    const db = database.db;
    const limits: number[] = [];
    let finishing: { id: bigint; resolve: () => void }[] = [];
    let done = 0;
    // Each claim's 8 items finish together, as a webhook worker's outcomes recorded in one statement do.
    const { queue } = toyQueue(db, systemClock, 'together', undefined, {
      claim: (limit, now) => {
        limits.push(limit);
        return db.query<Item>(CLAIM, [now, limit, randomBase62(12)]);
      },
      process: (item) =>
        new Promise<void>((resolve) => {
          finishing.push({ id: item.id, resolve });
          if (finishing.length < 8) return;
          const batch = finishing;
          finishing = [];
          void db
            .query(`UPDATE toy_work SET status = 'done' WHERE id = ANY($1::bigint[])`, [
              batch.map((one) => one.id.toString()),
            ])
            .then(() => {
              done += batch.length;
              for (const one of batch) one.resolve();
            });
        }),
    });
    await queue.start();
    await addWork(db, new Date(Date.now() - 1000), 24);
    await until(async () => done === 24);
    await queue.stop();
    expect(await pendingCount(db)).toBe(0);
    expect(limits.length).toBeGreaterThanOrEqual(3);
    expect(limits.every((limit) => limit === 8)).toBe(true);
  });

  it('stop() waits for the items in progress', async () => {
    const db = database.db;
    let finished = false;
    const { queue } = toyQueue(db, systemClock, 'c', async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      finished = true;
    });
    await queue.start();
    await addWork(db, new Date(Date.now() - 1000));
    await until(async () => {
      const [row] = await db.query(`SELECT 1 FROM toy_work WHERE status = 'running'`);
      return row !== undefined;
    });
    await queue.stop();
    expect(finished).toBe(true);
  });

  it('counts claimed, done and failed items and the items in progress, per queue (metrics)', async () => {
    const db = database.db;
    await db.query(`UPDATE toy_work SET status = 'done'`);
    const value = async (name: string, labels: Record<string, string>) => {
      const metric = registry.getSingleMetric(name);
      const { values } = await (metric as NonNullable<typeof metric>).get();
      const found = values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
      return found?.value ?? 0;
    };
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let calls = 0;
    const { queue } = toyQueue(db, systemClock, 'metered', async () => {
      calls++;
      if (calls === 1) throw new Error('the first item fails');
      await held;
    });
    await addWork(db, new Date(Date.now() - 1000), 3);
    await queue.start();
    await until(async () => (await value('sibyl_work_in_flight', { queue: 'metered' })) === 2);
    release();
    await until(
      async () => (await value('sibyl_work_items_total', { queue: 'metered', outcome: 'done' })) === 2,
    );
    expect(await value('sibyl_work_items_total', { queue: 'metered', outcome: 'claimed' })).toBe(3);
    expect(await value('sibyl_work_items_total', { queue: 'metered', outcome: 'failed' })).toBe(1);
    await until(async () => (await value('sibyl_work_in_flight', { queue: 'metered' })) === 0);
    await queue.stop();
    await db.query(`UPDATE toy_work SET status = 'done'`);
  });

  it('hands the batchable items of a claim to processBatch together, the others one by one, within its concurrency', async () => {
    const db = database.db;
    await db.query(`UPDATE toy_work SET status = 'done'`);
    const batches: number[] = [];
    let singles = 0;
    let inWork = 0;
    let mostInWork = 0;
    const working = async (count: number, work: () => Promise<void>) => {
      inWork += count;
      mostInWork = Math.max(mostInWork, inWork);
      await new Promise((resolve) => setTimeout(resolve, 20));
      await work();
      inWork -= count;
    };
    let finishOne: (item: Item) => Promise<void> = async () => {};
    const { queue, processed } = toyQueue(
      db,
      systemClock,
      'batch',
      async () => {
        singles++;
        await working(1, async () => {});
      },
      {
        batchable: (item) => item.id % 2n === 0n,
        async processBatch(items) {
          batches.push(items.length);
          await working(items.length, async () => {
            for (const item of items) await finishOne(item);
          });
        },
      },
    );
    finishOne = async (item) => {
      const done = await db.query(
        `UPDATE toy_work SET status = 'done', done_by = 'batch', done_count = done_count + 1
          WHERE id = $1 AND lease_token = $2 RETURNING id`,
        [item.id, item.lease_token],
      );
      if (done.length === 1) processed.push(item.id);
    };
    await queue.start();
    await addWork(db, new Date(Date.now() - 1000), 40);
    await until(async () => (await pendingCount(db)) === 0);
    await queue.stop();
    expect(processed).toHaveLength(40);
    expect(new Set(processed).size).toBe(40);
    // Even ids went in batches, odd ones one by one; never more items at work than the 8 slots.
    expect(batches.reduce((a, b) => a + b, 0)).toBe(20);
    expect(Math.max(...batches)).toBeGreaterThan(1);
    expect(mostInWork).toBeLessThanOrEqual(8);
    expect(singles).toBe(20);
  });

  it('an item that runs alone waits for the items in flight, runs by itself, and nothing is claimed meanwhile', async () => {
    const db = database.db;
    await db.query(`UPDATE toy_work SET status = 'done'`);
    // Two items back from runs that never finished (claimed once, the lease lapsed), among 30 new ones.
    await addWork(db, new Date(Date.now() - 1000), 30);
    const returned = await db.query<{ id: bigint }>(
      `UPDATE toy_work SET status = 'running', attempts = 1, lease_until = now() - interval '1 second'
        WHERE id IN (SELECT id FROM toy_work WHERE status = 'pending' ORDER BY id LIMIT 2) RETURNING id`,
    );
    const alone = new Set(returned.map((r) => r.id));
    const inWork = new Set<bigint>();
    const overlaps: string[] = [];
    let aloneAtWork: bigint | null = null;
    const { queue, processed } = toyQueue(
      db,
      systemClock,
      'alone',
      async (item) => {
        if (alone.has(item.id)) {
          if (inWork.size > 0) overlaps.push(`${item.id} started beside ${[...inWork].join(',')}`);
          aloneAtWork = item.id;
        } else if (aloneAtWork !== null) overlaps.push(`${item.id} started beside ${aloneAtWork}`);
        inWork.add(item.id);
        await new Promise((resolve) => setTimeout(resolve, 15));
        inWork.delete(item.id);
        if (aloneAtWork === item.id) aloneAtWork = null;
      },
      {
        async claim(limit, now) {
          if (aloneAtWork !== null) overlaps.push(`claimed while ${aloneAtWork} ran`);
          return db.query<Item & { attempts: number }>(
            `${CLAIM.replace('RETURNING w.id, w.lease_token', 'RETURNING w.id, w.lease_token, w.attempts')}`,
            [now, limit, randomBase62(12)],
          );
        },
        runsAlone: (item) => (item as Item & { attempts: number }).attempts > 1,
      },
    );
    await queue.start();
    await until(async () => (await pendingCount(db)) === 0);
    await queue.stop();
    expect(processed).toHaveLength(30);
    expect(overlaps).toEqual([]);
  });

  it.runIf(usingPostgres)(
    'PostgreSQL: after its listening connection is killed, a runner reconnects and looks again',
    async () => {
      const db = database.db;
      await db.query(`UPDATE toy_work SET status = 'done'`);
      const { queue, processed } = toyQueue(db, systemClock, 'd');
      await queue.start();
      const killed = await db.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE application_name = 'sibyl-listen' AND datname = current_database()`,
      );
      expect(killed.length).toBeGreaterThan(0);
      // Work added while nobody listens: its notification is lost, the reconnection finds it.
      await db.query('INSERT INTO toy_work (due_at) VALUES ($1)', [new Date(Date.now() - 1000)]);
      await until(async () => processed.length === 1);
      await queue.stop();
    },
  );
});

describe('batchable items with a room of their own, claimed ahead (docs/jobs.md#claims)', () => {
  interface Due {
    id: number;
    due: number;
  }

  it('are claimed before their time in claims of at most claimSize, held up to capacity, refetched when full, started at their time and never before', async () => {
    const due = Date.now() + 400;
    let table: Due[] = Array.from({ length: 25 }, (_, id) => ({ id, due }));
    const claims: { at: number; limit: number; got: number; heldAfter: number }[] = [];
    const starts: { at: number; items: Due[] }[] = [];
    let held = 0;
    const handler: QueueHandler<Due> = {
      name: 'toy-ahead',
      channel: 'toy_ahead',
      concurrency: 4,
      batching: { capacity: 20, claimSize: 10, aheadMs: 1000, startsAt: (item) => new Date(item.due) },
      async claim(limit, now, batches) {
        const until = (batches?.until ?? now).getTime();
        const take = table.filter((item) => item.due <= until).slice(0, batches?.limit ?? limit);
        table = table.filter((item) => !take.includes(item));
        held += take.length;
        claims.push({ at: Date.now(), limit: batches?.limit ?? limit, got: take.length, heldAfter: held });
        return take;
      },
      process: async () => {
        throw new Error('every item is batchable');
      },
      async processBatch(items) {
        starts.push({ at: Date.now(), items });
        await new Promise((resolve) => setTimeout(resolve, 20));
        held -= items.length;
      },
      async nextDueAt(now, looking) {
        const next = Math.min(...table.map((item) => item.due - (looking?.batchesAheadMs ?? 0)));
        return Number.isFinite(next) ? new Date(Math.max(next, now.getTime())) : null;
      },
    };
    const db = { listen: async () => async () => {} } as unknown as Database;
    const queue = new WorkQueue(handler, { db, clock: systemClock, log: silentLog }, { maxSleepMs: 50 });
    await queue.start();
    while (starts.flatMap((s) => s.items).length < 25)
      await new Promise((resolve) => setTimeout(resolve, 10));
    await queue.stop();

    // Every item ran once, none before its time.
    expect(starts.flatMap((s) => s.items.map((item) => item.id)).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 25 }, (_, id) => id),
    );
    expect(starts.filter((s) => s.at < due)).toEqual([]);
    // Claimed ahead: two full claims one after the other before their time, up to the capacity.
    expect(claims.slice(0, 2).map((c) => [c.got, c.at < due])).toEqual([
      [10, true],
      [10, true],
    ]);
    expect(claims.filter((c) => c.limit > 10 || c.heldAfter > 20)).toEqual([]);
    expect(starts.filter((s) => s.items.length > 10)).toEqual([]);
  });
});
