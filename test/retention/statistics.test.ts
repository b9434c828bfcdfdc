import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config.js';
import { analyzeStaleTables, vacuumTables } from '../../src/db/statistics.js';
import { ManualClock } from '../../src/lib/clock.js';
import { silentLog } from '../../src/logger.js';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import { retentionFeature } from '../../src/retention/feature.js';
import { testConfig } from '../helpers/context.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { marketCreated, ndjson } from '../markets/events.js';

/**
 * The embedded database's planner statistics and VACUUM (docs/operations.md#embedded-statistics): a
 * table with data and no ANALYZE yet is analyzed, then again only once it has grown by a fifth; a
 * table is vacuumed when never vacuumed, when its dead rows exceed 50 + a fifth of it, or (FREEZE)
 * when its transaction ids are old; the embedded database's worker runs it, PostgreSQL's (which has
 * autovacuum) does not.
 */

/** A fresh database per case (each starts from tables never analyzed or vacuumed); no app: nothing here is HTTP. */
let ctx: { database: TestDatabase; clock: ManualClock; config: Config };
let created = 0;

/** `count` more markets, through ingestion as the service records them. */
async function addMarkets(count: number) {
  const events = Array.from({ length: count }, () => marketCreated({ id: `stats-${created++}` }));
  expect(await ingestText(ctx.database.db, ndjson(events))).toMatchObject({ refused: 0 });
}
/** One row of `markets`' catalog entry. */
const catalog = async () => {
  const [row] = await ctx.database.db.query<{ allVisible: number; frozenAge: number }>(
    `SELECT relallvisible::int AS "allVisible", age(relfrozenxid)::int AS "frozenAge"
       FROM pg_class WHERE oid = 'markets'::regclass`,
  );
  if (!row) throw new Error('markets is not in pg_class');
  return row;
};
const deadRows = async () => {
  await ctx.database.db.query('SELECT pg_stat_force_next_flush()');
  const rows = await ctx.database.db.query<{ n: number }>(
    `SELECT n_dead_tup::int AS n FROM pg_stat_user_tables WHERE relid = 'markets'::regclass`,
  );
  return Number(rows[0]?.n);
};
/** Updates `count` markets; the statistics counters flushed when it commits (PostgreSQL's pool). */
async function updateMarkets(count: number) {
  await ctx.database.db.transaction(async (tx) => {
    await tx.query(
      `UPDATE markets SET fee_bps = fee_bps WHERE id IN (SELECT id FROM markets ORDER BY id LIMIT $1)`,
      [count],
    );
    await tx.query('SELECT pg_stat_force_next_flush()');
  });
}
const markets = (tables: { name: string; reason: string }[]) => tables.filter((t) => t.name === 'markets');

/** The other sessions of this database that hold a snapshot, as pg_stat_activity shows them. */
const snapshotHolders = () =>
  ctx.database.db.query<{ pid: number; state: string; query: string }>(
    `SELECT pid, state, left(query, 120) AS query FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_xmin IS NOT NULL`,
  );
/**
 * VACUUM marks a page all-visible only when no transaction of the database may still not see its
 * rows. PGlite has one session; on PostgreSQL, waits (up to 5 s) until no other session holds a
 * snapshot: once in `.ci/run` on a loaded machine a VACUUM there marked no page.
 */
async function noOtherSnapshots() {
  for (let tries = 0; tries < 200 && (await snapshotHolders()).length > 0; tries++)
    await new Promise((resolve) => setTimeout(resolve, 25));
}

const plannerRows = async () =>
  Number(
    (
      await ctx.database.db.query<{ n: number }>(
        `SELECT reltuples::int AS n FROM pg_class WHERE relname = 'markets'`,
      )
    )[0]?.n,
  );

beforeEach(async () => {
  ctx = { database: await createTestDatabase(), clock: new ManualClock(new Date()), config: testConfig() };
  created = 0;
  // On PostgreSQL, autovacuum would analyze the table behind the test's back.
  if (ctx.database.db.kind === 'postgres')
    await ctx.database.db.exec('ALTER TABLE markets SET (autovacuum_enabled = false)');
});
afterEach(async () => {
  await ctx.database.close();
});

describe('analyzeStaleTables', () => {
  it('analyzes a table with data never analyzed, then again only after it grew by a fifth', async () => {
    await analyzeStaleTables(ctx.database.db); // whatever the fresh database holds
    await addMarkets(400);
    expect(await plannerRows()).toBeLessThan(400);
    expect(await analyzeStaleTables(ctx.database.db)).toContain('markets');
    expect(await plannerRows()).toBe(400);
    expect(await analyzeStaleTables(ctx.database.db)).toEqual([]);

    await addMarkets(40); // a tenth more: not yet
    expect(await analyzeStaleTables(ctx.database.db)).not.toContain('markets');
    expect(await plannerRows()).toBe(400);

    await addMarkets(100); // a third more than when analyzed
    expect(await analyzeStaleTables(ctx.database.db)).toContain('markets');
    expect(await plannerRows()).toBe(540);
  });

  it('vacuums a table never vacuumed once it has 16 pages, then only when its dead rows exceed 50 + a fifth', async () => {
    await vacuumTables(ctx.database.db); // whatever the fresh database holds
    await addMarkets(400);
    expect((await catalog()).allVisible).toBe(0);
    await noOtherSnapshots();
    expect(markets(await vacuumTables(ctx.database.db))).toEqual([
      { name: 'markets', reason: 'no-visibility-map' },
    ]);
    expect((await catalog()).allVisible, JSON.stringify(await snapshotHolders())).toBeGreaterThan(0);
    expect(await plannerRows()).toBe(400); // VACUUM (ANALYZE)
    expect(markets(await vacuumTables(ctx.database.db))).toEqual([]);

    await updateMarkets(100); // 100 dead rows: under 50 + 80
    expect(await deadRows()).toBe(100);
    expect(markets(await vacuumTables(ctx.database.db))).toEqual([]);
    expect(await deadRows()).toBe(100);

    await updateMarkets(100); // 200: over
    expect(await deadRows()).toBeGreaterThan(130);
    expect(markets(await vacuumTables(ctx.database.db))).toEqual([{ name: 'markets', reason: 'dead-rows' }]);
    expect(await deadRows()).toBe(0);
  });

  it('vacuums with FREEZE a table whose oldest transaction id is older than the threshold', async () => {
    await addMarkets(400);
    await vacuumTables(ctx.database.db);
    for (let i = 0; i < 50; i++) await ctx.database.db.query('SELECT txid_current()'); // ids go by
    const before = (await catalog()).frozenAge;
    expect(before).toBeGreaterThanOrEqual(50);
    expect(markets(await vacuumTables(ctx.database.db, before + 1_000_000))).toEqual([]); // not older than
    expect(markets(await vacuumTables(ctx.database.db, before - 1))).toEqual([
      { name: 'markets', reason: 'freeze' },
    ]);
    // Frozen: the table's oldest unfrozen id is now recent (a plain VACUUM would leave it).
    expect((await catalog()).frozenAge).toBeLessThan(before - 1);
  });

  it('the embedded database’s worker runs it every EMBEDDED_ANALYZE_INTERVAL_MS; 0 turns it off', async () => {
    const deps = { db: ctx.database.db, clock: ctx.clock, log: silentLog, pruned: [] };
    const part = await retentionFeature.worker?.({ ...deps, config: ctx.config });
    const task = part?.tasks?.find((t) => t.name === 'embedded-statistics');
    if (ctx.database.db.kind === 'postgres') {
      expect(task).toBeUndefined();
      return;
    }
    expect(task?.intervalMs).toBe(300_000);
    await addMarkets(400);
    await task?.run(ctx.clock.now(), new AbortController().signal);
    expect(await plannerRows()).toBe(400);
    expect((await catalog()).allVisible).toBeGreaterThan(0); // and vacuumed

    const off = { ...ctx.config, retention: { ...ctx.config.retention, embeddedAnalyzeIntervalMs: 0 } };
    const none = await retentionFeature.worker?.({ ...deps, config: off });
    expect(none?.tasks?.map((t) => t.name)).toEqual(['retention']);
  });
});
