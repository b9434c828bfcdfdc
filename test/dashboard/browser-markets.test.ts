import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoMarkets } from '../../src/markets/demo/demo.js';
import { ingestText } from '../../src/markets/ingest/ingest.js';
import {
  openPage,
  type SignedInPage,
  type Stage,
  signedInPage,
  startStage,
} from '../helpers/dashboard-stage.js';
import {
  chargesByOperation,
  type ListedMarket,
  marketsApi,
  openMarket,
  shownMarkets,
} from '../helpers/markets-page.js';
import { event, ndjson, wallet } from '../markets/events.js';

/**
 * The Markets page in a real browser (docs/dashboard.md#pages), on the sandbox demo markets: the
 * search box and the sort give the API's lists, the chart of each outcome holds the API's candles,
 * the trades table the API's trades, and a trade ingested meanwhile reaches the page through the
 * market stream, without a reload; the header's balance follows the billed reads. A market's own
 * address, the list's pages and the phone layout: browser-markets-address.test.ts.
 */

let stage: Stage;
let user: SignedInPage;
let key: string;

const { api, listIds } = marketsApi(
  () => stage,
  () => key,
);
/** Outcome 0's 15-minute candles of a market, as the history route answers them. */
const chartCandles = async (id: string) =>
  (await api(`/markets/${id}/history?outcome=0&interval=15m`)).candles as {
    time: string;
    close: number;
    trades: number;
  }[];
/** Those candles' closes as the page's chart states them (`data-closes`). */
const chartCloses = async (id: string) =>
  (await chartCandles(id)).map((c) => String(c.close / 10_000)).join(',');
const candleCount = async (id: string, outcome: number) =>
  ((await api(`/markets/${id}/history?outcome=${outcome}&interval=15m`)).candles as unknown[]).length;

/**
 * What the page has read of a market since `since` (an index into `reads`): its trades and history
 * requests, and the charges the session's account paid for them (the ledger: the dashboard's reads
 * carry no key). The page's requests are recorded as it sends them (beforeAll).
 */
const reads: string[] = [];
async function readsOf(id: string, since: { requests: number; charges: Record<string, number> }) {
  const path = `/dashboard/api/sandbox/markets/${encodeURIComponent(id)}/`;
  const sent = reads.slice(since.requests).filter((url) => new URL(url).pathname.startsWith(path));
  const charges = await chargesByOperation(stage);
  return {
    trades: sent.filter((url) => new URL(url).pathname.endsWith('/trades')).length,
    histories: sent.filter((url) => new URL(url).pathname.endsWith('/history')).length,
    tradeCharges: (charges.listMarketTrades ?? 0) - (since.charges.listMarketTrades ?? 0),
    historyCharges: (charges.getMarketHistory ?? 0) - (since.charges.getMarketHistory ?? 0),
  };
}
const mark = async () => ({ requests: reads.length, charges: await chargesByOperation(stage) });

/** The balance the header shows for the sandbox account, and the one the session's account has now. */
const headerBalance = (page: Page) =>
  page
    .getByRole('navigation', { name: 'Account' })
    .getByRole('link', { name: /^Sandbox/ })
    .textContent();
const dollars = (text: string | null) => Number(text?.replace(/^.*\$/, '').replaceAll(',', ''));
const sessionBalance = (page: Page) =>
  page.evaluate(async () => {
    const answer = await fetch('/dashboard/api/auth/session');
    const body = (await answer.json()) as { accounts: { sandbox: { balanceUsd: string } } };
    return `Sandbox · $${body.accounts.sandbox.balanceUsd}`;
  });

/** Outcome 0 trades of `marketId`, ingested as the platform sends them (one body, one transaction). */
async function ingestTrades(marketId: string, trades: { tradeId: string; at: number; price: number }[]) {
  const report = await ingestText(
    stage.ctx.database.db,
    ndjson(
      trades.map(({ tradeId, at, price }) =>
        event('trade', new Date(at).toISOString(), {
          marketId,
          tradeId,
          outcome: 0,
          price,
          shares: '1000',
          buyer: wallet('browser-buyer'),
          seller: wallet('browser-seller'),
        }),
      ),
    ),
  );
  expect(report).toMatchObject({ refused: 0 });
}

beforeAll(async () => {
  stage = await startStage();
  await loadDemoMarkets(stage.ctx.database.db, stage.ctx.clock);
  key = (await stage.ctx.createAccount({ mode: 'sandbox', balanceUsd: '10.00' })).key;
  user = await signedInPage(stage, 'signIn');
  user.page.on('request', (request) => {
    if (request.url().includes('/dashboard/api/')) reads.push(request.url());
  });
});
afterAll(async () => {
  await stage.close();
});

describe('the markets page', () => {
  let market: ListedMarket;

  it('searches and sorts as the API does, and says what a read costs', async () => {
    const { page } = user;
    // A demo market that is open and trades: the first by volume.
    const byVolume = (await api('/markets?status=OPEN&sort=volume&pageSize=1')).markets as ListedMarket[];
    market = byVolume[0] as ListedMarket;
    await openPage(page, 'Markets');
    await shownMarkets(page, await listIds('sort=volume&order=desc'));
    await page.getByText('This read cost $0.05.', { exact: true }).first().waitFor();

    // A search sorts by relevance, as the API does; cleared, the sort before it comes back.
    const sortBox = page.getByRole('combobox', { name: 'Sort' });
    const title = market.title.split(' ').slice(0, 3).join(' ');
    await page.getByRole('searchbox', { name: 'Search' }).fill(title);
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const found = await listIds(`q=${encodeURIComponent(title)}`);
    expect(found).toEqual(await listIds(`q=${encodeURIComponent(title)}&sort=relevance&order=desc`));
    expect(found).toContain(market.id);
    expect(await shownMarkets(page, found)).toContain(market.id);
    expect(await sortBox.inputValue()).toBe('relevance');

    await page.getByRole('searchbox', { name: 'Search' }).fill('');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await shownMarkets(page, await listIds('sort=volume&order=desc'));
    expect(await sortBox.inputValue()).toBe('volume');
    await page.getByRole('combobox', { name: 'Sort' }).selectOption('closesAt');
    const closing = await listIds('sort=closesAt&order=asc');
    expect(closing).not.toEqual(await listIds('sort=volume&order=desc'));
    await shownMarkets(page, closing);
    await page.getByRole('combobox', { name: 'Order' }).selectOption('desc');
    await shownMarkets(page, await listIds('sort=closesAt&order=desc'));
  });

  it('draws each outcome’s candles, lists the API’s trades, and follows a new trade live', async () => {
    const { page } = user;
    await page.getByRole('combobox', { name: 'Sort' }).selectOption('volume');
    const opened = await mark();
    const before = await headerBalance(page);
    const view = await openMarket(page, market.title);
    await view.getByText(/^live, 0\.002 USD a minute/).waitFor();
    // Its own address, and where the eye is: the market's heading on the screen, not below the list.
    expect(new URL(page.url()).pathname).toBe(`/dashboard/sandbox/markets/${encodeURIComponent(market.id)}`);
    const heading = await view.getByRole('heading', { name: market.title }).boundingBox();
    expect(heading?.y).toBeGreaterThanOrEqual(0);
    expect((heading?.y ?? Number.POSITIVE_INFINITY) + (heading?.height ?? 0)).toBeLessThanOrEqual(
      page.viewportSize()?.height ?? 0,
    );

    // One chart per outcome, holding as many points as the API's candles (the clock stands still).
    for (const outcome of market.outcomes) {
      const chart = view.locator(`figure[data-outcome="${outcome.index}"] .chart`);
      const expected = await candleCount(market.id, outcome.index);
      expect(expected).toBeGreaterThan(0);
      await expect.poll(() => chart.getAttribute('data-points')).toBe(String(expected));
    }

    // The trades table: the API's latest 20, newest first.
    const apiTrades = (await api(`/markets/${market.id}/trades?limit=20`)).trades as {
      tradeId: string;
      shares: string;
    }[];
    const tradeRows = view.getByRole('table', { name: 'Trades' }).locator('tbody tr');
    await expect
      .poll(() => tradeRows.evaluateAll((rows) => rows.map((row) => row.getAttribute('data-trade'))))
      .toEqual(apiTrades.map((t) => t.tradeId));
    // Shares in base units, in groups of three digits.
    const sharesColumn = await tradeRows.locator('td:nth-child(4)').allTextContents();
    expect(sharesColumn).toEqual(apiTrades.map((t) => BigInt(t.shares).toLocaleString('en-US')));
    expect(sharesColumn.some((text) => text?.includes(','))).toBe(true);
    // One balance on the screen: the header's, read again after the billed reads (the histories
    // and the trades: at least what they cost is gone from it; the stream's minutes may be too), none
    // per read.
    const opening = market.outcomes.length * 0.05 + 0.02;
    await expect
      .poll(async () => dollars(await headerBalance(page)))
      .toBeLessThanOrEqual(dollars(before) - opening + 1e-9);
    expect(dollars(await headerBalance(page))).toBeGreaterThanOrEqual(dollars(await sessionBalance(page)));
    expect(await page.locator('.cost').allTextContents()).not.toContainEqual(
      expect.stringMatching(/balance/),
    );

    // A trade ingested now (through ingestion, as the platform sends it) reaches the page by the stream.
    const tradeId = `browser-live-${Date.now()}`;
    await ingestTrades(market.id, [{ tradeId, at: stage.ctx.clock.now().getTime(), price: 7777 }]);
    await view.locator(`tr[data-trade="${tradeId}"]`).waitFor();
    await expect.poll(() => tradeRows.first().getAttribute('data-trade')).toBe(tradeId);
    // The outcome's last price moved (the market event), and the chart's last point with it.
    await view.getByRole('table', { name: 'Outcomes' }).getByRole('cell', { name: '0.7777' }).waitFor();
    const chart = view.locator('figure[data-outcome="0"] .chart');
    await expect.poll(() => chart.getAttribute('data-last')).toBe('0.7777');
    await expect.poll(() => chart.getAttribute('data-points')).toBe(String(await candleCount(market.id, 0)));
    // What that cost: one history read per outcome and one trades read, each charged once; the live
    // trade in the chart's last bucket was merged without another read.
    expect(await readsOf(market.id, opened)).toEqual({
      trades: 1,
      histories: market.outcomes.length,
      tradeCharges: 1,
      historyCharges: market.outcomes.length,
    });
  });

  it('merges a late trade into its own bucket of the chart, as the history draws it, without a reload', async () => {
    const { page } = user;
    const chart = page.locator('figure[data-outcome="0"] .chart');
    const candles = () => chartCandles(market.id);
    const closes = () => chartCloses(market.id);
    const shown = await closes();
    await expect.poll(() => chart.getAttribute('data-closes')).toBe(shown);
    const before = (await candles()).slice(0, -1);
    // Before the chart's last bucket: one without trades (flat, carrying a close), two with trades.
    const flat = before.findLast((c) => c.trades === 0);
    const busy = before.filter((c) => c.trades > 0).slice(-2);
    expect(flat).toBeDefined();
    expect(busy).toHaveLength(2);
    const late = (name: string, at: number, price: number) =>
      ingestTrades(market.id, [{ tradeId: `browser-late-${name}-${Date.now()}`, at, price }]);
    const QUARTER = 15 * 60_000;
    // Into the flat bucket: its close, and the flat buckets after it carry it.
    await late('flat', Date.parse((flat as { time: string }).time) + 60_000, 1234);
    const afterFlat = await closes();
    expect(afterFlat).not.toBe(shown);
    await expect.poll(() => chart.getAttribute('data-closes')).toBe(afterFlat);
    // Into a bucket with trades, at its very end (its last trade now), and at its very start (not).
    const [early, end] = busy as [(typeof busy)[number], (typeof busy)[number]];
    await late('end', Date.parse(end.time) + QUARTER - 1, 4321);
    await expect.poll(() => chart.getAttribute('data-closes')).toBe(await closes());
    await late('start', Date.parse(early.time), 9876);
    await expect.poll(() => chart.getAttribute('data-closes')).toBe(await closes());
    expect(await chart.getAttribute('data-points')).toBe(String((await candles()).length));

    // Into the chart's last bucket, before the trade that closes it (the live one of the test
    // before), on a page that has just read the history, so it does not know when that close was:
    // arriving last does not make it the close.
    await openPage(page, 'Home');
    await openPage(page, 'Markets');
    const reopened = await mark();
    const view = await openMarket(page, market.title);
    await view.getByText(/^live, 0\.002 USD a minute/).waitFor();
    const reread = await closes();
    await expect.poll(() => chart.getAttribute('data-closes')).toBe(reread);
    const last = (await candles()).at(-1) as { time: string; close: number; trades: number };
    expect(last.trades).toBeGreaterThan(0);
    const tradesBefore = (await api(`/markets/${market.id}/trades?limit=1`)).trades as { tradeId: string }[];
    await late('last', Date.parse(last.time), 1111);
    const lateId = (
      (await api(`/markets/${market.id}/trades?outcome=0&limit=100`)).trades as { tradeId: string }[]
    )
      .map((t) => t.tradeId)
      .find((id) => id.startsWith('browser-late-last-'));
    expect(lateId).toBeDefined();
    expect(tradesBefore[0]?.tradeId).not.toBe(lateId);
    // The page has the trade (its row), and its chart still closes the bucket as the route does.
    await view.locator(`tr[data-trade="${lateId}"]`).waitFor();
    expect((await candles()).at(-1)?.close).toBe(last.close);
    await expect.poll(() => chart.getAttribute('data-closes')).toBe(reread);
    await expect.poll(() => chart.getAttribute('data-last')).toBe(String(last.close / 10_000));
    // The page knew when that close was from the latest trades it read with the histories: the late
    // trade cost no read (no trades read of the outcome's newest, no history read of the bucket).
    expect(await readsOf(market.id, reopened)).toEqual({
      trades: 1,
      histories: market.outcomes.length,
      tradeCharges: 1,
      historyCharges: market.outcomes.length,
    });
  });

  it('draws the trades the stream brings while its histories are on their way, read before those trades', async () => {
    const { page } = user;
    const listed = (await api('/markets?sort=volume&pageSize=20')).markets as ListedMarket[];
    const other = listed.find((m) => m.id !== market.id && m.status === 'OPEN') as ListedMarket;
    expect(other).toBeDefined();
    const candles = () => chartCandles(other.id);
    const closes = () => chartCloses(other.id);
    const now = stage.ctx.clock.now().getTime();
    // An older trade, in a bucket of the chart without trades (it becomes that bucket's close), and
    // the outcome's newest, now: the trades page read after the histories names the newest only.
    const flat = (await candles()).slice(0, -1).findLast((c) => c.trades === 0);
    expect(flat).toBeDefined();
    const older = Date.parse(flat?.time ?? '') + 60_000;
    const ids = [`browser-early-older-${Date.now()}`, `browser-early-newest-${Date.now()}`];

    // The market's histories answered as the server has them now, before the trades, and handed to
    // the page only once the stream has brought it the trades; a bucket read again later goes through.
    let fetched = 0;
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const histories = `**/dashboard/api/sandbox/markets/${encodeURIComponent(other.id)}/history**`;
    await page.route(histories, async (route) => {
      if (fetched >= other.outcomes.length) return route.continue();
      fetched += 1;
      // Fetched again from outside the page: with the Fetch Metadata the page's own request carries,
      // which the dashboard checks (docs/dashboard.md#origin-check) and Playwright does not copy.
      const response = await route.fetch({
        headers: { ...route.request().headers(), 'sec-fetch-site': 'same-origin' },
      });
      await released;
      await route.fulfill({ response });
    });
    await openPage(page, 'Home');
    await openPage(page, 'Markets');
    const view = await openMarket(page, other.title);
    await view.getByText(/^live, 0\.002 USD a minute/).waitFor();
    await expect.poll(() => fetched).toBe(other.outcomes.length);
    await ingestTrades(other.id, [
      { tradeId: ids[0] as string, at: older, price: 2468 },
      { tradeId: ids[1] as string, at: now, price: 1357 },
    ]);
    for (const id of ids) await view.locator(`tr[data-trade="${id}"]`).waitFor();
    release();

    // The chart as the history route draws it now: the older trade's bucket and the newest close.
    const chart = view.locator('figure[data-outcome="0"] .chart');
    const expected = await closes();
    expect(expected).toContain('0.2468');
    await expect.poll(() => chart.getAttribute('data-closes')).toBe(expected);
    expect(await chart.getAttribute('data-points')).toBe(String((await candles()).length));
    await page.unroute(histories);
  });

  it('says why its market stream is refused: the status, the code and the limit named (429 perKey)', async () => {
    const { page } = user;
    // Away from the market (its stream closes), then the session's three streams taken elsewhere.
    await openPage(page, 'Home');
    const url = `/dashboard/api/sandbox/stream/markets?ids=${encodeURIComponent(market.id)}`;
    const held = async () =>
      page.evaluate(async (u) => {
        const w = globalThis as unknown as { held?: AbortController[] };
        w.held ??= [];
        const controller = new AbortController();
        const answer = await fetch(u, { signal: controller.signal });
        if (answer.status === 200) w.held.push(controller);
        return w.held.length;
      }, url);
    // Until the closed stream's place is free again, a fourth is refused: poll until three are held.
    await expect.poll(held, { timeout: 15_000 }).toBe(3);
    await openPage(page, 'Markets');
    const view = await openMarket(page, market.title);
    await view.getByText(/^refused: 429 STREAM_LIMIT_EXCEEDED \(perKey\) — /).waitFor();
    // The reads are not streams: the charts are drawn all the same.
    await view.locator('figure[data-outcome="0"] .chart canvas').waitFor();
    await page.evaluate(() => {
      for (const c of (globalThis as unknown as { held: AbortController[] }).held) c.abort();
    });
  });

  it('fits a phone’s screen (360 px) with a market open: the tables scroll inside their cards', async () => {
    const { page } = user;
    await page.setViewportSize({ width: 360, height: 800 });
    const chart = page.locator('figure[data-outcome="0"] .chart');
    await expect.poll(() => chart.evaluate((element) => element.clientWidth)).toBeLessThanOrEqual(360);
    await expect
      .poll(() => page.evaluate('document.documentElement.scrollWidth - window.innerWidth'))
      .toBeLessThanOrEqual(0);
  });
});
