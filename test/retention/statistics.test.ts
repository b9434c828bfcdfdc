import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { analyzeStaleTables } from '../../src/db/statistics.js';
import { silentLog } from '../../src/logger.js';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import { retentionFeature } from '../../src/retention/feature.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { marketCreated, ndjson } from '../markets/events.js';

/**
 * The embedded database's planner statistics (docs/operations.md#embedded-statistics): a table with
 * data and no ANALYZE yet is analyzed, then again only once it has grown by a fifth; the embedded
 * database's worker runs it, PostgreSQL's (which has autovacuum) does not.
 */

let ctx: TestContext;
let created = 0;

/** `count` more markets, through ingestion as the service records them. */
async function addMarkets(count: number) {
  const events = Array.from({ length: count }, () => marketCreated({ id: `stats-${created++}` }));
  expect(await ingestText(ctx.database.db, ndjson(events))).toMatchObject({ refused: 0 });
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
  ctx = await createTestContext();
  created = 0;
  // On PostgreSQL, autovacuum would analyze the table behind the test's back.
  if (ctx.database.db.kind === 'postgres')
    await ctx.database.db.exec('ALTER TABLE markets SET (autovacuum_enabled = false)');
});
afterEach(async () => {
  await ctx.close();
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

    const off = { ...ctx.config, retention: { ...ctx.config.retention, embeddedAnalyzeIntervalMs: 0 } };
    const none = await retentionFeature.worker?.({ ...deps, config: off });
    expect(none?.tasks?.map((t) => t.name)).toEqual(['retention']);
  });
});
