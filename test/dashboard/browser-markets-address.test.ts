import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoMarkets } from '../../src/markets/demo/demo.js';
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
  marketView,
  openMarket,
  shownMarkets,
} from '../helpers/markets-page.js';

/**
 * The Markets page in a real browser (docs/dashboard.md#pages), on the sandbox demo markets: a market
 * at its own address (a reload and a link show it), the list a page at a time by the API's cursor,
 * and the page read on a phone's 390 px.
 */

let stage: Stage;
let user: SignedInPage;
let key: string;
let market: ListedMarket;
const { api, listIds } = marketsApi(
  () => stage,
  () => key,
);

beforeAll(async () => {
  stage = await startStage();
  await loadDemoMarkets(stage.ctx.database.db, stage.ctx.clock);
  key = (await stage.ctx.createAccount({ mode: 'sandbox', balanceUsd: '10.00' })).key;
  user = await signedInPage(stage, 'signIn');
  // A demo market that is open and trades: the first by volume.
  market = (
    (await api('/markets?status=OPEN&sort=volume&pageSize=1')).markets as ListedMarket[]
  )[0] as ListedMarket;
});
afterAll(async () => {
  await stage.close();
});

describe('a market’s address, the list’s pages, a phone', () => {
  it('gives a market its own address: a reload or a link shows it (the detail read, billed), and back to the list', async () => {
    const { page } = user;
    await openPage(page, 'Markets');
    const view = await openMarket(page, market.title);
    await view.locator('figure[data-outcome="0"] .chart canvas').waitFor();
    const address = `${stage.base}/dashboard/sandbox/markets/${encodeURIComponent(market.id)}`;
    expect(page.url()).toBe(address);
    const since = await chargesByOperation(stage);
    const charged = async (operation: string) =>
      ((await chargesByOperation(stage))[operation] ?? 0) - (since[operation] ?? 0);
    await page.reload();
    const reloaded = marketView(page, market.title);
    await reloaded.locator('figure[data-outcome="0"] .chart canvas').waitFor();
    await reloaded.getByRole('table', { name: 'Trades' }).locator('tbody tr').first().waitFor();
    expect(page.url()).toBe(address);
    await page.getByText('This read cost $0.02.', { exact: true }).first().waitFor();
    // The market's detail read once (the API's GET /markets/{id}, 0.02), and no list read.
    expect(await charged('getMarket')).toBe(1);
    expect(await charged('listMarkets')).toBe(0);

    // A link opened in another tab of the session shows the same market.
    const tab = await user.context.newPage();
    await tab.goto(address);
    await marketView(tab, market.title).locator('figure[data-outcome="0"] .chart canvas').waitFor();
    await tab.close();

    await page.getByRole('link', { name: '← All markets' }).click();
    await shownMarkets(page, await listIds('sort=volume&order=desc'));
    expect(new URL(page.url()).pathname).toBe('/dashboard/sandbox/markets');
    expect(await marketView(page, market.title).count()).toBe(0);
  });

  it('pages past the first 20 markets with the API’s cursor, and back', async () => {
    const { page } = user;
    const first = await api('/markets?sort=volume&order=desc&pageSize=20');
    const ids = (list: Record<string, unknown>) => (list.markets as ListedMarket[]).map((m) => m.id);
    expect(first.total as number).toBeGreaterThan(20);
    expect(first.nextCursor).toEqual(expect.any(String));
    await shownMarkets(page, ids(first));
    await page.getByRole('button', { name: 'Next page' }).click();
    const second = await api(
      `/markets?sort=volume&order=desc&pageSize=20&cursor=${encodeURIComponent(first.nextCursor as string)}`,
    );
    expect(ids(second).length).toBeGreaterThan(0);
    await shownMarkets(page, ids(second));
    await page
      .getByText(`Markets 21–${20 + ids(second).length} of ${first.total}.`, { exact: true })
      .waitFor();
    expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(
      second.nextCursor === null,
    );
    await page.getByRole('button', { name: 'Previous page' }).click();
    await shownMarkets(page, ids(first));
    await page.getByText(`Markets 1–20 of ${first.total}.`, { exact: true }).waitFor();
  });

  it('reads on a phone (390 px): titles wrap across the list; a trade is one line, its table scrolls in its card', async () => {
    const { page } = user;
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${stage.base}/dashboard/sandbox/markets`);
    const titles = page.getByRole('table', { name: 'Markets' }).getByRole('link');
    await titles.first().waitFor();
    // Each title and its cell: on the screen without scrolling the table, the cell a third of it wide
    // at least (not a column of a few letters a line).
    const boxes = await titles.evaluateAll((links) =>
      links.map((link) => {
        const box = link.getBoundingClientRect();
        const cell = link.parentElement?.getBoundingClientRect() ?? box;
        return {
          text: link.textContent,
          left: box.left,
          right: Math.max(box.right, cell.right),
          cell: cell.width,
        };
      }),
    );
    expect(boxes.length).toBe(20);
    for (const box of boxes) {
      expect(box.left, box.text ?? '').toBeGreaterThanOrEqual(0);
      expect(box.right, box.text ?? '').toBeLessThanOrEqual(390);
      expect(box.cell, box.text ?? '').toBeGreaterThanOrEqual(130);
    }
    const view = await openMarket(page, market.title);
    const heading = await view.getByRole('heading', { name: market.title }).boundingBox();
    expect((heading?.x ?? 0) + (heading?.width ?? Number.POSITIVE_INFINITY)).toBeLessThanOrEqual(390);
    const trades = view.getByRole('table', { name: 'Trades' });
    await trades.locator('tbody tr').nth(5).waitFor();
    const wrapper = trades.locator('xpath=..');
    const overflow = await wrapper.evaluate(
      (element) =>
        (globalThis as unknown as { getComputedStyle(e: unknown): { overflowX: string } }).getComputedStyle(
          element,
        ).overflowX,
    );
    expect(overflow).toBe('auto');
    // A row as tall as the header's one line, not a time broken over four.
    const head = (await trades.locator('thead tr').boundingBox())?.height ?? 0;
    const heights = await trades
      .locator('tbody tr')
      .evaluateAll((rows) => rows.map((row) => row.getBoundingClientRect().height));
    expect(Math.max(...heights)).toBeLessThanOrEqual(head * 1.25);
    await wrapper.evaluate((element) => {
      element.scrollLeft = element.scrollWidth;
    });
    const last = await trades.locator('thead th').last().boundingBox();
    const layout = { lastRight: (last?.x ?? 0) + (last?.width ?? Number.POSITIVE_INFINITY) };
    // Scrolled to its end, the last column is on the screen.
    expect(layout.lastRight).toBeLessThanOrEqual(390);
    await expect
      .poll(() => page.evaluate('document.documentElement.scrollWidth - window.innerWidth'))
      .toBeLessThanOrEqual(0);
  });
});
