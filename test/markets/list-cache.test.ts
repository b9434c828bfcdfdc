import fastJson from 'fast-json-stringify';
import pg from 'pg';
import Type from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import { LIST_MAX_AGE_MS, ListCache } from '../../src/markets/read/list-cache.js';
import { MarketList } from '../../src/markets/schemas.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { usingPostgres } from '../helpers/db.js';
import { countEntries, expectLedgerReconciles } from '../helpers/ledger.js';
import { event, marketCreated, ndjson, wallet } from './events.js';

/**
 * The market list is cached per instance until what it shows changes (src/markets/read/list-cache.ts):
 * every change to a listed column notifies at its commit, whoever makes it; trades and orders do not.
 */

let ctx: TestContext;
let account: TestAccount;
const NOW = Date.parse('2026-06-15T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  ctx = await createTestContext();
  ctx.clock.set(iso(NOW));
  account = await ctx.createAccount({ balanceUsd: '50.00' });
  const events = Array.from({ length: 6 }, (_, i) =>
    marketCreated({ id: `cached-${i}`, title: `Market ${i}` }, { at: iso(NOW - (i + 1) * 60_000) }),
  );
  expect(await ingestText(ctx.database.db, ndjson(events))).toMatchObject({ refused: 0 });
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

const list = async (query = '') => {
  const response = await ctx.request(account.key, { method: 'GET', url: `/api/v1/markets${query}` });
  expect(response.statusCode).toBe(200);
  return response;
};
const titleOf = async (id: string, query = '') =>
  (await list(query)).json().markets.find((m: { id: string }) => m.id === id)?.title as string | undefined;

/** A change the triggers do not see (replication role): only the cache can explain an old answer. */
async function silentTitle(id: string, title: string): Promise<void> {
  await ctx.database.db.transaction(async (tx) => {
    await tx.query('SET LOCAL session_replication_role = replica');
    await tx.query('UPDATE markets SET title = $2 WHERE id = $1', [id, title]);
  });
}

/** Lists until `id` shows `title` (the notification is on its way); fails after 5 s. */
async function eventually(id: string, title: string, query = ''): Promise<void> {
  const deadline = Date.now() + 5000;
  while ((await titleOf(id, query)) !== title) {
    if (Date.now() > deadline) throw new Error(`${id} never showed "${title}"`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Lists until the cache is listening: a page read, then a silent change, must still read the same.
 * Until then every request reads the database; a probe that got cached expires with the clock
 * (a notifying change could arrive after this returns and clear the page a test relies on).
 */
async function warm(query = ''): Promise<void> {
  const deadline = Date.now() + 5000;
  for (;;) {
    await list(query);
    const probe = `probe ${Math.random()}`;
    await silentTitle('cached-0', probe);
    const seen = await titleOf('cached-0', query);
    await silentTitle('cached-0', 'Market 0');
    if (seen !== probe) return;
    if (Date.now() > deadline) throw new Error('the list cache never started');
    ctx.clock.advance(LIST_MAX_AGE_MS);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('GET /markets from the list cache', () => {
  it('serves a page again from the cache, charged 0.05 each time, until a listed column changes', async () => {
    await warm();
    const charges = await countEntries(ctx.database.db, account.accountId, 'charge');
    await silentTitle('cached-1', 'Silently renamed');
    expect(await titleOf('cached-1')).toBe('Market 1');
    expect(await titleOf('cached-1')).toBe('Market 1');
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(charges + 2);
    // An ordinary UPDATE through the database fires the trigger; its notification clears the cache.
    await ctx.database.db.query("UPDATE markets SET title = 'Renamed' WHERE id = 'cached-1'");
    await eventually('cached-1', 'Renamed');
  });

  it('a change of the creator or of the search text alone clears it too (migration 0035)', async () => {
    // Each UPDATE names only that column (set to itself): the statement trigger fires on the column
    // named, so only the trigger's column list explains the cleared page.
    for (const column of ['creator_wallet', 'search']) {
      await warm();
      const title = `Silent before ${column}`;
      await silentTitle('cached-5', title);
      expect(await titleOf('cached-5')).toBe('Market 5');
      await ctx.database.db.query(`UPDATE markets SET ${column} = ${column} WHERE id = 'cached-5'`);
      await eventually('cached-5', title);
      await silentTitle('cached-5', 'Market 5');
      ctx.clock.advance(LIST_MAX_AGE_MS);
    }
  });

  it('a market ingested by this process shows at once', async () => {
    await warm('?pageSize=100');
    await ingestText(ctx.database.db, ndjson([marketCreated({ id: 'cached-new' }, { at: iso(NOW) })]));
    const ids = (await list('?pageSize=100')).json().markets.map((m: { id: string }) => m.id);
    expect(ids[0]).toBe('cached-new');
  });

  it('trades, orders and positions do not clear it; a status change does', async () => {
    await warm('?status=OPEN');
    await silentTitle('cached-2', 'Hidden by the cache');
    const marketId = 'cached-2';
    await ingestText(
      ctx.database.db,
      ndjson([
        event('order.placed', iso(NOW - 1000), {
          marketId,
          orderId: 'o-1',
          wallet: wallet('a'),
          outcome: 0,
          side: 'bid',
          price: 4000,
          shares: '100',
        }),
        event('trade', iso(NOW - 900), {
          marketId,
          tradeId: 't-1',
          outcome: 0,
          price: 4000,
          shares: '10',
          buyer: wallet('a'),
          seller: wallet('b'),
        }),
        event('position', iso(NOW - 800), {
          marketId,
          wallet: wallet('a'),
          outcome: 0,
          shares: '10',
          wagered: '4',
        }),
      ]),
    );
    expect(await titleOf('cached-2', '?status=OPEN')).toBe('Market 2');
    await ingestText(
      ctx.database.db,
      ndjson([event('market.status', iso(NOW - 500), { marketId, status: 'CLOSED' })]),
    );
    const open = (await list('?status=OPEN')).json().markets.map((m: { id: string }) => m.id);
    expect(open).not.toContain('cached-2');
    const closed = (await list('?status=CLOSED')).json().markets;
    expect(closed.find((m: { id: string }) => m.id === 'cached-2')?.title).toBe('Hidden by the cache');
  });

  it('an answer is at most LIST_MAX_AGE_MS old, notification or not', async () => {
    await warm('?category=crypto');
    await silentTitle('cached-3', 'Seen after the cap');
    expect(await titleOf('cached-3', '?category=crypto')).toBe('Market 3');
    ctx.clock.advance(LIST_MAX_AGE_MS - 1);
    expect(await titleOf('cached-3', '?category=crypto')).toBe('Market 3');
    ctx.clock.advance(1);
    expect(await titleOf('cached-3', '?category=crypto')).toBe('Seen after the cap');
  });

  it.runIf(usingPostgres)(
    'a change committed by another connection clears it when its notification arrives',
    async () => {
      await warm('?pageSize=10');
      const other = new pg.Client({ connectionString: ctx.database.location });
      await other.connect();
      try {
        await other.query("UPDATE markets SET title = 'From elsewhere' WHERE id = 'cached-4'");
      } finally {
        await other.end();
      }
      await eventually('cached-4', 'From elsewhere', '?pageSize=10');
    },
  );

  it('writes what the response schema’s serialiser writes', async () => {
    const response = await list('?pageSize=3');
    const schema = Type.Object({
      requestId: Type.String(),
      ...MarketList.properties,
      costUsd: Type.String(),
      remainingBalanceUsd: Type.String(),
    });
    expect(fastJson(schema)(response.json())).toBe(response.body);
    expect(response.json().markets).toHaveLength(3);
  });
});

describe('ListCache', () => {
  function fakeDb(): Database {
    return { listen: async () => async () => {} } as unknown as Database;
  }
  const clock = { now: () => new Date(NOW) };
  const log = { warn: () => {} } as never;

  it('does not keep a page read before an invalidation, nor let later requests join it', async () => {
    const cache = new ListCache<string>({ db: fakeDb(), clock, log, enabled: true });
    let loads = 0;
    const load = () => Promise.resolve(`v${++loads}`);
    await cache.get('k', load); // starts listening; not cached yet
    await new Promise((resolve) => setImmediate(resolve));
    let release: (value: string) => void = () => {};
    const slow = cache.get('k', () => {
      loads++;
      return new Promise<string>((resolve) => {
        release = resolve;
      });
    });
    cache.invalidate();
    const after = cache.get('k', load);
    release('stale');
    expect(await slow).toBe('stale');
    expect(await after).toBe('v3');
    expect(cache.size).toBe(1);
    expect(await cache.get('k', load)).toBe('v3');
    expect(loads).toBe(3);
  });

  it('concurrent misses share one read; off, every request reads', async () => {
    const cache = new ListCache<string>({ db: fakeDb(), clock, log, enabled: true });
    await cache.get('k', async () => 'first');
    await new Promise((resolve) => setImmediate(resolve));
    let loads = 0;
    const load = async () => `v${++loads}`;
    expect(await Promise.all([cache.get('k', load), cache.get('k', load)])).toEqual(['v1', 'v1']);
    const off = new ListCache<string>({ db: fakeDb(), clock, log, enabled: false });
    await off.get('k', load);
    await off.get('k', load);
    expect(loads).toBe(3);
  });
});
