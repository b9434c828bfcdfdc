import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cursorCodec } from '../../src/http/cursor.js';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import { readList } from '../../src/markets/search/list.js';
import { type OneWordRow, oneWordCount, oneWordStatement } from '../../src/markets/search/one-word.js';
import { type ListQueryInput, parseListQuery } from '../../src/markets/search/query.js';
import { countStatement, pageStatement } from '../../src/markets/search/sql.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { marketCreated, ndjson } from './events.js';

/**
 * A one-word search by relevance read from the top of market_search_terms (docs/markets.md#one-word-search)
 * gives exactly the general statement's pages — the same markets, order and sort keys (so the same
 * cursors) — by cursor and by page, in both orders and with filters; it is taken only when the word's
 * prefix names one lexeme of the corpus, and the terms follow every change of a market's search text.
 */

let ctx: TestContext;
let account: TestAccount;
const NOW = new Date('2026-06-15T12:00:00Z');

/** A corpus where `comet` is in titles, labels, categories and descriptions, 0–3 times, with many ties. */
function corpus(): ReturnType<typeof marketCreated>[] {
  return Array.from({ length: 80 }, (_, i) => {
    const titles = [
      `Comet ${i}`,
      `Comet or comet ${i}`,
      `Will the comet pass by ${i}`,
      `Other ${i}`,
      `Bits and bitcoin ${i}`,
    ];
    const title = i === 5 ? 'Comet' : i === 41 ? 'COMET' : (titles[i % titles.length] as string);
    return marketCreated({
      id: `ow-${String(i).padStart(2, '0')}`,
      title,
      description: ['A test market', 'The comet is bright', 'comet, comet and comet', 'No tail'][
        (i >> 2) % 4
      ],
      category: i % 7 === 0 ? 'comet' : i % 2 === 0 ? 'space' : 'sky',
      outcomes: i % 3 === 0 ? ['Comet yes', 'Comet no'] : ['Yes', 'No'],
    });
  });
}

beforeAll(async () => {
  ctx = await createTestContext();
  ctx.clock.set(NOW.toISOString());
  account = await ctx.createAccount({ balanceUsd: '50.00' });
  expect(await ingestText(ctx.database.db, ndjson(corpus()))).toMatchObject({ refused: 0 });
});
afterAll(async () => {
  await ctx.close();
});

const cursors = cursorCodec(Buffer.alloc(32, 7));
const listPlan = (query: ListQueryInput) => parseListQuery(query, cursors);
const deps = () => ({ db: ctx.database.db, now: NOW, solUsd: async () => 150, cursors });

/** One page by the one-word statement: whether it applied, and its (id, key) rows. */
async function fastPage(query: ListQueryInput): Promise<{ single: boolean | null; rows: string[][] }> {
  const built = oneWordStatement(listPlan(query));
  if (!built) throw new Error('not a one-word search');
  const rows = await ctx.database.db.query<OneWordRow & { id: string | null; sort_key: string }>(
    built.text,
    built.params,
  );
  return {
    single: rows[0]?.single ?? null,
    rows: rows.filter((r) => r.id !== null).map((r) => [r.id as string, r.sort_key]),
  };
}

/** The same page by the general statement, which ranks every match. */
async function generalPage(query: ListQueryInput): Promise<string[][]> {
  const built = pageStatement(listPlan(query), NOW);
  const rows = await ctx.database.db.query<{ id: string; sort_key: string }>(built.text, built.params);
  return rows.map((r) => [r.id, r.sort_key]);
}

/** Walks every page by cursor through the route's function, checking each page against both statements. */
async function walk(query: ListQueryInput, single: boolean): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 50; pages++) {
    const page = { ...query, pageSize: 7, ...(cursor ? { cursor } : {}) };
    const fast = await fastPage(page);
    expect(fast.single).toBe(single);
    const general = await generalPage(page);
    if (single) expect(fast.rows).toEqual(general);
    const body = await readList(deps(), listPlan(page));
    expect(body.markets.map((m) => m.id)).toEqual(general.slice(0, 7).map(([id]) => id));
    seen.push(...body.markets.map((m) => m.id));
    if (!body.nextCursor) return seen;
    cursor = body.nextCursor;
  }
  throw new Error('too many pages');
}

describe('one-word search from the terms index', () => {
  it('gives the general statement’s pages by cursor and by page, both orders, with filters', async () => {
    const queries: ListQueryInput[] = [
      { q: 'comet' },
      { q: 'COMET' },
      { q: 'come' },
      { q: '  Comet ' },
      { q: 'comet', order: 'asc' },
      { q: 'comet', category: 'space' },
      { q: 'comet', category: 'sky', order: 'asc' },
      { q: 'comet', sort: 'relevance' },
    ];
    for (const query of queries) {
      const all = await generalPage({ ...query, pageSize: 100 });
      expect(all.length).toBeGreaterThan(10);
      expect(await walk(query, true)).toEqual(all.map(([id]) => id));
      for (const page of [1, 2, 5, 20]) {
        const fast = await fastPage({ ...query, pageSize: 7, page });
        expect(fast.rows).toEqual(await generalPage({ ...query, pageSize: 7, page }));
      }
    }
    // The exact titles first (`Comet`, `COMET`: the larger id first), then many equal ranks by id.
    const top = (await generalPage({ q: 'comet', pageSize: 3 })).map(([id]) => id);
    expect(top.slice(0, 2)).toEqual(['ow-41', 'ow-05']);
    const keys = (await generalPage({ q: 'comet', pageSize: 100 })).map(([, key]) => Number(key));
    expect(new Set(keys).size).toBeLessThan(keys.length / 2);
  });

  it('the route answers from it, with the total of every match', async () => {
    const response = await ctx.request(account.key, {
      method: 'GET',
      url: '/api/v1/markets?q=comet&pageSize=5',
    });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    const all = await generalPage({ q: 'comet', pageSize: 100 });
    expect(body.markets.map((m: { id: string }) => m.id)).toEqual(all.slice(0, 5).map(([id]) => id));
    expect(body.total).toBe(all.length);
  });

  it('counts from the index alone what the general count counts, whatever the status', async () => {
    const db = ctx.database.db;
    const count = async (built: { text: string; params: unknown[] } | null) => {
      if (!built) throw new Error('no statement');
      return (await db.query<{ total: number }>(built.text, built.params))[0]?.total;
    };
    const same = async (query: ListQueryInput) => {
      const plan = listPlan(query);
      const general = await count(countStatement(plan));
      const single = (await fastPage({ ...query, sort: 'relevance' })).single;
      // From the index when the prefix names one lexeme; otherwise null, and the general count answers.
      expect(await count(oneWordCount(plan))).toBe(single ? general : null);
      return general;
    };
    // A status change by SQL reaches the terms: the closed markets leave status=OPEN's count.
    await db.query(`UPDATE markets SET status = 'CLOSED' WHERE id IN ('ow-00', 'ow-10', 'ow-21')`);
    const open = await same({ q: 'comet', status: 'OPEN' });
    expect(await same({ q: 'comet', status: 'CLOSED' })).toBe(3);
    expect(await same({ q: 'comet' })).toBe((open ?? 0) + 3);
    for (const q of ['com', 'bit', 'b', 'zebra']) await same({ q });
    expect(await same({ q: 'bit' })).toBeGreaterThan(5);
    await db.query(`UPDATE markets SET status = 'DRAFT' WHERE id = 'ow-10'`);
    expect(await same({ q: 'comet', status: 'CLOSED' })).toBe(2);
    await db.query(`UPDATE markets SET status = 'OPEN' WHERE id IN ('ow-00', 'ow-10', 'ow-21')`);
    expect(await same({ q: 'comet', status: 'OPEN' })).toBe((open ?? 0) + 3);
    // Another filter, or a word PostgreSQL might lower-case otherwise: the general count.
    expect(oneWordCount(listPlan({ q: 'comet', category: 'sky' }))).toBeNull();
    expect(oneWordCount(listPlan({ q: 'comète' }))).toBeNull();
    expect(oneWordCount(listPlan({ q: 'comet tail' }))).toBeNull();
  });

  it('is not taken when the prefix names several lexemes, and the general statement answers', async () => {
    expect((await fastPage({ q: 'bit' })).single).toBe(false);
    const all = await generalPage({ q: 'bit', pageSize: 100 });
    expect(all.length).toBeGreaterThan(5);
    expect(await walk({ q: 'bit' }, false)).toEqual(all.map(([id]) => id));
    // A word no market holds: nothing to walk, the general statement finds nothing either.
    expect((await fastPage({ q: 'zebra' })).single).toBe(null);
    expect((await readList(deps(), listPlan({ q: 'zebra' }))).total).toBe(0);
  });

  it('follows a search text changed by SQL, and a new market whose word shares the prefix', async () => {
    const db = ctx.database.db;
    const terms = (id: string) =>
      db.query('SELECT lexeme, rank FROM market_search_terms WHERE market_id = $1 ORDER BY lexeme', [id]);
    const computed = (id: string) =>
      db.query(
        `SELECT t.lexeme, t.rank FROM markets m, market_search_terms_of(m.id, m.search) t
          WHERE m.id = $1 ORDER BY t.lexeme`,
        [id],
      );
    expect(await terms('ow-03')).toEqual(await computed('ow-03'));
    // An operator's change to the search text (the service writes it only at creation).
    await db.query(
      `UPDATE markets SET search = market_search_vector('Comet comet comet', 'comet', 'comet', ARRAY['comet'])
        WHERE id = 'ow-03'`,
    );
    expect(await terms('ow-03')).toEqual(await computed('ow-03'));
    expect((await generalPage({ q: 'comet', pageSize: 100 })).map(([id]) => id).indexOf('ow-03')).toBe(2);
    expect(await walk({ q: 'comet' }, true)).toEqual(
      (await generalPage({ q: 'comet', pageSize: 100 })).map(([id]) => id),
    );
    // `comets` now shares the prefix: a market holding both would rank by the sum, so the general statement answers.
    expect(
      await ingestText(db, ndjson([marketCreated({ id: 'ow-99', title: 'Comets and comet' })])),
    ).toMatchObject({
      refused: 0,
    });
    expect(await walk({ q: 'comet' }, false)).toEqual(
      (await generalPage({ q: 'comet', pageSize: 100 })).map(([id]) => id),
    );
    await db.query(`DELETE FROM market_outcomes WHERE market_id = 'ow-99'`);
    await db.query(`DELETE FROM market_trade_totals WHERE market_id = 'ow-99'`);
    await db.query(`DELETE FROM markets WHERE id = 'ow-99'`);
    expect(await terms('ow-99')).toEqual([]);
    expect((await fastPage({ q: 'comet' })).single).toBe(true);
  });
});
