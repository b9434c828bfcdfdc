import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import { LIST_MAX_AGE_MS } from '../../src/markets/read/list-cache.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { expectLedgerReconciles } from '../helpers/ledger.js';
import { event, marketCreated, ndjson } from './events.js';

/**
 * The list's `total` is kept per filter set until the list changes (docs/markets.md#total): pages
 * that differ only by sort, order, page or cursor do not count again, and every change that can
 * change a count (a market created, a status change) clears it at its commit.
 */

let ctx: TestContext;
let account: TestAccount;
const NOW = Date.parse('2026-06-15T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();
const IDS = Array.from({ length: 6 }, (_, i) => `total-${i}`);

beforeAll(async () => {
  ctx = await createTestContext();
  ctx.clock.set(iso(NOW));
  account = await ctx.createAccount({ balanceUsd: '50.00' });
  const events = IDS.map((id, i) =>
    marketCreated({ id, title: `Comet ${i}` }, { at: iso(NOW - (i + 1) * 60_000) }),
  );
  expect(await ingestText(ctx.database.db, ndjson(events))).toMatchObject({ refused: 0 });
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

/** Every request a new page key, so the page cache never answers: only the total can be kept. */
let pageNumber = 0;
async function totalOf(query: string): Promise<number> {
  pageNumber++;
  const response = await ctx.request(account.key, {
    method: 'GET',
    url: `/api/v1/markets?${query}&pageSize=1&page=${pageNumber}`,
  });
  expect(response.statusCode).toBe(200);
  return response.json().total as number;
}

/**
 * A status change whose notification is lost (its trigger disabled for this transaction only): only
 * a kept total can hide it. The database's own counts (migration 0039) still follow it.
 */
async function silentStatus(id: string, status: string): Promise<void> {
  await ctx.database.db.transaction(async (tx) => {
    await tx.query('ALTER TABLE markets DISABLE TRIGGER markets_listed_change');
    await tx.query('UPDATE markets SET status = $2 WHERE id = $1', [id, status]);
    await tx.query('ALTER TABLE markets ENABLE TRIGGER markets_listed_change');
  });
}

/** Lists until the caches are listening (until then every request counts); the database unchanged. */
async function warm(query: string): Promise<void> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const before = await totalOf(query);
    await silentStatus('total-5', 'CANCELLED');
    const seen = await totalOf(query);
    await silentStatus('total-5', 'OPEN');
    if (seen === before) return;
    if (Date.now() > deadline) throw new Error('the total cache never started');
    ctx.clock.advance(LIST_MAX_AGE_MS);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('GET /markets total', () => {
  const OPEN_BY_CLOSE = 'status=OPEN&sort=closesAt';

  it('is kept per filter set across pages, sorts and orders, and follows a status change and a new market', async () => {
    await warm(OPEN_BY_CLOSE);
    expect(await totalOf(OPEN_BY_CLOSE)).toBe(6);
    // The database now holds 5 open markets, but nothing notified: the kept total answers, for every
    // sort and order of the same filters.
    await silentStatus('total-0', 'CANCELLED');
    expect(await totalOf(OPEN_BY_CLOSE)).toBe(6);
    expect(await totalOf('status=OPEN&sort=volume&order=asc')).toBe(6);
    // The spec's plain list (no new parameter) with the same filters shares the kept count.
    expect(await totalOf('status=OPEN')).toBe(6);
    await silentStatus('total-0', 'OPEN');

    await ingestText(
      ctx.database.db,
      ndjson([event('market.status', iso(NOW - 500), { marketId: 'total-1', status: 'CLOSED' })]),
    );
    expect(await totalOf(OPEN_BY_CLOSE)).toBe(5);
    expect(await totalOf('status=OPEN')).toBe(5);
    expect(await totalOf('status=CLOSED&sort=closesAt')).toBe(1);
    expect(await totalOf('status=CLOSED')).toBe(1);

    await ingestText(
      ctx.database.db,
      ndjson([marketCreated({ id: 'total-new', title: 'Comet new' }, { at: iso(NOW - 100) })]),
    );
    expect(await totalOf(OPEN_BY_CLOSE)).toBe(6);
  });

  it('a search counts its matches in its page statement, and past the last page too', async () => {
    // A filter set not read yet: each first read counts (the relevance page in the same pass; a page
    // past the end, without a row to carry the count, by the count statement).
    const past = await ctx.request(account.key, { method: 'GET', url: '/api/v1/markets?q=comet&page=99' });
    expect(past.json()).toMatchObject({ markets: [], total: 7 });
    const first = await ctx.request(account.key, {
      method: 'GET',
      url: '/api/v1/markets?q=comet%20new&pageSize=1',
    });
    expect(first.json()).toMatchObject({ total: 1, nextCursor: null });
    expect(first.json().markets[0].id).toBe('total-new');
  });

  it('is at most LIST_MAX_AGE_MS old, notification or not', async () => {
    const query = 'status=OPEN&sort=createdAt&order=asc';
    await warm(query);
    await silentStatus('total-2', 'CANCELLED');
    expect(await totalOf(query)).toBe(6);
    ctx.clock.advance(LIST_MAX_AGE_MS);
    expect(await totalOf(query)).toBe(5);
  });
});
