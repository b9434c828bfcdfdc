import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext, withTransaction } from '../../src/context.js';
import { loadDemoMarkets } from '../../src/markets/demo/demo.js';
import { webhookOutbox } from '../../src/webhooks/outbox.js';
import type { TestAccount, TestContext } from '../../test/helpers/context.js';
import { createSibylClient, type SibylClient, unwrap } from '../src/index.js';
import { startService } from './helpers.js';

// The page iterators against the real service: every item once, in the list's order, across
// pages, and the same items one page of 100 gives.
let ctx: TestContext;
let baseUrl: string;

beforeAll(async () => {
  ({ ctx, baseUrl } = await startService());
});
afterAll(async () => {
  await ctx.close();
});

/** A client whose every GET is counted, and `afterPage` run once its answer is in. */
function client(account: TestAccount, afterPage?: (n: number) => Promise<void>) {
  let pages = 0;
  const sibyl = createSibylClient({
    baseUrl,
    apiKey: account.key,
    fetch: async (request) => {
      const response = await globalThis.fetch(request);
      if (request.method === 'GET') {
        pages += 1;
        await afterPage?.(pages);
      }
      return response;
    },
  });
  return { sibyl, pages: () => pages };
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

function schedulePrice(sibyl: SibylClient, minutes: number) {
  ctx.clock.advance(1); // distinct createdAt: the list's order is then the creation order, reversed
  return unwrap(
    sibyl.POST('/api/v1/price/schedule', {
      body: {
        symbol: 'SOL',
        resolutionTimestamp: new Date(ctx.clock.now().getTime() + minutes * 60_000).toISOString(),
        callbackUrl: 'https://hooks.example.com/sibyl',
      },
    }),
  );
}

describe('page iterators', () => {
  it('iterateJobs: every job of the kind, newest first, across pages', async () => {
    const account = await ctx.createAccount({ balanceUsd: '10.00' });
    const { sibyl, pages } = client(account);
    const ids: string[] = [];
    for (let i = 0; i < 7; i += 1) ids.push((await schedulePrice(sibyl, 10 + i)).jobId);
    const jobs = await collect(sibyl.iterateJobs('price', { pageSize: 3 }));
    expect(jobs.map((job) => job.jobId)).toEqual([...ids].reverse());
    expect(pages()).toBe(3);
    const whole = await unwrap(
      sibyl.GET('/api/v1/price/scheduled', { params: { query: { pageSize: 100 } } }),
    );
    expect(jobs).toEqual(whole.jobs);
    expect(await collect(sibyl.iterateJobs('ai'))).toEqual([]);
    expect(await collect(sibyl.iterateJobs('price', { status: 'CANCELLED' }))).toEqual([]);
  });

  it('iterateJobs: a job created while iterating does not make an older one come twice', async () => {
    const account = await ctx.createAccount({ balanceUsd: '10.00' });
    const ids: string[] = [];
    const setup = client(account);
    for (let i = 0; i < 4; i += 1) ids.push((await schedulePrice(setup.sibyl, 10 + i)).jobId);
    // After the first page is read, a new job pushes every older one down a place.
    const { sibyl } = client(account, async (page) => {
      if (page === 1) await schedulePrice(setup.sibyl, 30);
    });
    const jobs = await collect(sibyl.iterateJobs('price', { pageSize: 2 }));
    expect(jobs.map((job) => job.jobId)).toEqual([...ids].reverse());
  });

  it('iterateTransactions: every ledger entry, following nextStartingAfter', async () => {
    const account = await ctx.createAccount({ balanceUsd: '2.00' });
    const { sibyl, pages } = client(account);
    for (let i = 0; i < 4; i += 1)
      await unwrap(sibyl.POST('/api/v1/price/batch', { body: { symbols: ['SOL'] } }));
    const before = pages();
    const entries = await collect(sibyl.iterateTransactions({ limit: 2 }));
    expect(pages() - before).toBe(3);
    expect(entries.map((entry) => entry.kind)).toEqual(['charge', 'charge', 'charge', 'charge', 'deposit']);
    const whole = await unwrap(
      sibyl.GET('/api/v1/account/transactions', { params: { query: { limit: 100 } } }),
    );
    expect(entries).toEqual(whole.transactions);
    expect(await collect(sibyl.iterateTransactions({ kind: 'deposit' }))).toHaveLength(1);
  });

  it('iterateDeliveries: every webhook delivery across pages', async () => {
    const account = await ctx.createAccount();
    const context = createContext(ctx.database.db, ctx.clock);
    for (let i = 0; i < 5; i += 1) {
      ctx.clock.advance(1);
      await withTransaction(context, (tx) =>
        webhookOutbox.enqueueCallback(tx, {
          accountId: account.accountId,
          url: 'https://hooks.example.com/sibyl',
          type: 'ai',
          status: 'completed',
          requestId: `req_pages${i}`,
          data: { n: i },
        }),
      );
    }
    const { sibyl, pages } = client(account);
    const deliveries = await collect(sibyl.iterateDeliveries({ pageSize: 2 }));
    expect(deliveries.map((d) => d.requestId)).toEqual([4, 3, 2, 1, 0].map((i) => `req_pages${i}`));
    expect(pages()).toBe(3);
    expect(await collect(sibyl.iterateDeliveries({ status: 'DELIVERED' }))).toEqual([]);
  });

  it('iterateMarkets: every listed market, each page charged', async () => {
    await loadDemoMarkets(ctx.database.db, ctx.clock);
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const { sibyl, pages } = client(account);
    const whole = await unwrap(sibyl.GET('/api/v1/markets', { params: { query: { pageSize: 100 } } }));
    expect(whole.total).toBeGreaterThan(10);
    const markets = await collect(sibyl.iterateMarkets({ pageSize: 10 }));
    expect(markets).toEqual(whole.markets);
    const listPages = pages();
    expect(listPages - 1).toBe(Math.ceil(whole.total / 10));
    const { balanceUsd } = await unwrap(sibyl.GET('/api/v1/account'));
    expect(balanceUsd).toBe((1 - 0.05 * listPages).toFixed(2)); // 0.05 a list page
  });

  it('iterateMarkets follows the cursor of a search; iterateMarketTrades pages a market’s trades', async () => {
    const account = await ctx.createAccount({ balanceUsd: '2.00' });
    const { sibyl } = client(account);
    const query = { sort: 'volume', order: 'asc' } as const;
    const whole = await unwrap(
      sibyl.GET('/api/v1/markets', { params: { query: { ...query, pageSize: 100 } } }),
    );
    expect(await collect(sibyl.iterateMarkets({ ...query, pageSize: 7 }))).toEqual(whole.markets);
    const id = (whole.markets.at(-1) as { id: string }).id;
    const all = await unwrap(
      sibyl.GET('/api/v1/markets/{id}/trades', { params: { path: { id }, query: { limit: 100 } } }),
    );
    expect(all.trades.length).toBeGreaterThan(5);
    const trades = await collect(sibyl.iterateMarketTrades(id, { limit: 4 }));
    expect(trades.map((t) => t.tradeId).slice(0, all.trades.length)).toEqual(
      all.trades.map((t) => t.tradeId),
    );
    expect(new Set(trades.map((t) => t.tradeId)).size).toBe(trades.length);
  });

  it('throws the API error of a refused page', async () => {
    const account = await ctx.createAccount({ permissions: ['price'] });
    const { sibyl } = client(account);
    await expect(collect(sibyl.iterateTransactions())).rejects.toMatchObject({
      status: 403,
      code: 'PERMISSION_DENIED',
    });
  });
});
