import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import { FOLD } from '../../src/markets/search/list-counts.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { type Event, event, marketCreated, ndjson } from './events.js';

/**
 * The markets per (status, category) the database keeps for the list's `total` (migration 0039,
 * docs/markets.md#kept-list-count): after every kind of change — creations, status changes by
 * ingestion and by SQL, a category changed, deletions, the fold — and under concurrent writers and
 * folds, their sums equal a count of the markets.
 */

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});

const CATEGORIES = ['crypto', 'sports', 'politics'];

/** Kept sums and counted markets per (status, category), non-DRAFT and DRAFT alike; zero groups left out. */
async function keptAndCounted() {
  const kept = await database.db.query<{ status: string; category: string; n: number }>(
    `SELECT status, category, sum(n)::int AS n FROM market_list_counts
      GROUP BY status, category HAVING sum(n) <> 0 ORDER BY status, category`,
  );
  const counted = await database.db.query<{ status: string; category: string; n: number }>(
    `SELECT status, category, count(*)::int AS n FROM markets GROUP BY status, category ORDER BY status, category`,
  );
  return { kept, counted };
}

function created(prefix: string, count: number): Event[] {
  return Array.from({ length: count }, (_, i) =>
    marketCreated(
      { id: `${prefix}-${i}`, category: CATEGORIES[i % CATEGORIES.length] as string },
      { at: '2026-03-01T10:00:00Z' },
    ),
  );
}

function statuses(prefix: string, count: number, status: string, at: string): Event[] {
  return Array.from({ length: count }, (_, i) =>
    event('market.status', at, { marketId: `${prefix}-${i}`, status }),
  );
}

describe('the kept list counts', () => {
  it('equal a count of the markets after creations, status changes, a category change, deletions and folds', async () => {
    expect(await ingestText(database.db, ndjson(created('lc', 1_100)))).toMatchObject({ refused: 0 });
    let { kept, counted } = await keptAndCounted();
    expect(counted.reduce((sum, g) => sum + g.n, 0)).toBeGreaterThanOrEqual(1_100);
    expect(kept).toEqual(counted);

    const closing = statuses('lc', 600, 'CLOSED', '2026-03-02T10:00:00Z');
    const drafts = statuses('lc', 10, 'DRAFT', '2026-03-03T10:00:00Z');
    expect(await ingestText(database.db, ndjson([...closing, ...drafts]))).toMatchObject({ refused: 0 });
    await database.db.query(`UPDATE markets SET category = 'tech' WHERE id IN ('lc-20', 'lc-21', 'lc-22')`);
    await database.db.query(`UPDATE markets SET title = title || '!' WHERE id LIKE 'lc-1%'`); // no count changes
    const lifecycle = ['lc-1000', 'lc-1001'];
    await database.db.query(`UPDATE markets SET status = 'RESOLVING' WHERE id = ANY($1::text[])`, [
      lifecycle,
    ]);
    ({ kept, counted } = await keptAndCounted());
    expect(kept).toEqual(counted);
    expect(kept.find((g) => g.status === 'CLOSED' && g.category === 'sports')?.n).toBeGreaterThan(0);

    const rowsBefore = (
      await database.db.query<{ n: number }>('SELECT count(*)::int AS n FROM market_list_counts')
    )[0];
    await database.db.query(FOLD);
    const rowsAfter = (
      await database.db.query<{ n: number }>('SELECT count(*)::int AS n FROM market_list_counts')
    )[0];
    expect(rowsAfter?.n).toBe(counted.length);
    expect(rowsAfter?.n).toBeLessThan(rowsBefore?.n ?? 0);
    expect((await keptAndCounted()).kept).toEqual(counted);

    for (const table of ['market_outcomes', 'market_trade_totals'])
      await database.db.query(`DELETE FROM ${table} WHERE market_id IN ('lc-3', 'lc-4')`);
    await database.db.query(`DELETE FROM markets WHERE id IN ('lc-3', 'lc-4')`);
    ({ kept, counted } = await keptAndCounted());
    expect(kept).toEqual(counted);
  });

  it('stay exact under concurrent creations, status changes and folds', async () => {
    const writers = Array.from({ length: 6 }, async (_, w) => {
      await ingestText(database.db, ndjson(created(`cc${w}`, 300)));
      await ingestText(
        database.db,
        ndjson(statuses(`cc${w}`, 150 + w * 20, 'CLOSED', '2026-03-04T10:00:00Z')),
      );
      await ingestText(database.db, ndjson(statuses(`cc${w}`, 40, 'CANCELLED', '2026-03-05T10:00:00Z')));
    });
    const folds = Array.from({ length: 8 }, async (_, k) => {
      await new Promise((resolve) => setTimeout(resolve, k * 15));
      await database.db.query(FOLD);
    });
    await Promise.all([...writers, ...folds]);
    const { kept, counted } = await keptAndCounted();
    expect(kept).toEqual(counted);
    expect(kept.find((g) => g.status === 'CANCELLED')?.n).toBeGreaterThan(0);
  });
});
