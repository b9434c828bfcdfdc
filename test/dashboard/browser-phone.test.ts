import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoMarkets } from '../../src/markets/demo/demo.js';
import { installWallet } from '../helpers/browser.js';
import {
  keyRow,
  openPage,
  type PageTitle,
  type Stage,
  signedInPhonePage,
  startStage,
  switchMode,
} from '../helpers/dashboard-stage.js';
import { TestWallet } from '../helpers/wallet.js';

/**
 * What a new user met on a phone and in an odd browser: the dashboard at 360–430 px wide (a wallet's
 * in-app browser) — no page wider than the screen, the navigation behind a menu button — and a
 * browser whose language tag Intl refuses (`en-US@posix`), which once left the page blank.
 */

let stage: Stage;

beforeAll(async () => {
  stage = await startStage();
  // The Markets page lists the sandbox demo markets, as on a first start.
  await loadDemoMarkets(stage.ctx.database.db, stage.ctx.clock);
});
afterAll(async () => {
  await stage.close();
});

const PAGES: PageTitle[] = ['Home', 'Add funds', 'Usage', 'Keys', 'Activity', 'Markets'];

/** How far the page reaches past the screen's right edge (0: it fits). */
async function overflow(page: Page): Promise<number> {
  return Number(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'));
}

describe('on a phone', () => {
  for (const width of [360, 390, 430]) {
    it(`at ${width} px every page fits the screen, in both accounts, reached through the menu`, async () => {
      const { context, page } = await signedInPhonePage(stage, width);
      // Something in every table: a key that has paid, a test delivery, a job, an AI request.
      await openPage(page, 'Keys');
      await page.getByLabel('Name').fill(`phone key ${width}`);
      await page.getByRole('button', { name: 'Create key' }).click();
      const key = (await page.getByLabel('New API key').textContent()) as string;
      await page.getByRole('button', { name: 'Done' }).click();
      await keyRow(page, `phone key ${width}`).waitFor();
      const call = (method: string, path: string, body?: unknown) =>
        fetch(`${stage.base}/api/v1${path}`, {
          method,
          headers: {
            authorization: `Bearer ${key}`,
            ...(body ? { 'content-type': 'application/json' } : {}),
          },
          ...(body ? { body: JSON.stringify(body) } : {}),
        });
      expect((await call('GET', '/price/SOL')).status).toBe(200);
      await call('POST', '/price/schedule', {
        symbol: 'SOL',
        resolutionTimestamp: new Date(stage.ctx.clock.now().getTime() + 3_600_000).toISOString(),
        callbackUrl: `${stage.receiver.url}/jobs`,
      });
      await call('POST', '/ai/resolve', {
        question: 'Does the dashboard fit a phone screen without scrolling sideways?',
        outcomes: ['Yes', 'No'],
        callbackUrl: `${stage.receiver.url}/ai`,
      });
      await call('POST', '/webhooks/test', { callbackUrl: `${stage.receiver.url}/test` });
      await stage.work();

      for (const mode of ['Sandbox', 'Live'] as const) {
        await switchMode(page, mode);
        for (const title of PAGES) {
          // The navigation is folded: the menu button opens it, and a link closes it again.
          const nav = page.getByRole('navigation', { name: 'Pages' });
          expect(await nav.isVisible()).toBe(false);
          await openPage(page, title);
          expect(await nav.isVisible()).toBe(false);
          await expect(
            page.getByRole('button', { name: 'Menu' }).getAttribute('aria-expanded'),
          ).resolves.toBe('false');
          if (title === 'Usage') await page.getByRole('table', { name: 'Ledger' }).waitFor();
          if (title === 'Activity') {
            for (const tab of ['Scheduled jobs', 'AI requests', 'Webhooks']) {
              await page.getByRole('tab', { name: tab }).click();
              await page.locator('.card').first().waitFor();
              expect(await overflow(page), `${mode} ${title} ${tab} at ${width} px`).toBeLessThanOrEqual(0);
            }
          }
          if (title === 'Home') await page.locator('.chart canvas').waitFor();
          if (title === 'Markets' && mode === 'Sandbox') {
            // The list, then a market open: its charts and its trades (a wide table in its card).
            const first = page.getByRole('table', { name: 'Markets' }).getByRole('link').first();
            await first.click();
            await page.locator('figure[data-outcome="0"] .chart canvas').waitFor();
            await page.getByRole('table', { name: 'Trades' }).locator('tbody tr').first().waitFor();
          }
          // The live account has no money: the list's refusal is what the page shows, and it fits too.
          if (title === 'Markets' && mode === 'Live')
            await page.getByRole('alert').filter({ hasText: 'INSUFFICIENT_BALANCE' }).waitFor();
          expect(await overflow(page), `${mode} ${title} at ${width} px`).toBeLessThanOrEqual(0);
        }
      }
      // The wallet and sign-out are in the menu too.
      await page.getByRole('button', { name: 'Menu' }).click();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Sign in with your Solana wallet' }).waitFor();
      expect(await overflow(page)).toBeLessThanOrEqual(0);
      await context.close();
    });
  }

  it('the wide tables scroll inside their cards, and an AI request’s votes can be read', async () => {
    const { context, page } = await signedInPhonePage(stage, 360);
    const session = await page.evaluate(async () => (await fetch('/dashboard/api/auth/session')).json());
    const { key } = await stage.ctx.addKey(
      (session as { accounts: { sandbox: { id: string } } }).accounts.sandbox.id,
    );
    await fetch(`${stage.base}/api/v1/ai/resolve`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        question: 'Will the votes table scroll inside its card?',
        outcomes: ['Yes', 'No'],
        context: '[sandbox:votes=0,0,0,0]',
        callbackUrl: `${stage.receiver.url}/ai`,
      }),
    });
    await stage.work();
    await openPage(page, 'Activity');
    await page.getByRole('tab', { name: 'AI requests' }).click();
    await page.getByRole('button', { name: 'Will the votes table scroll inside its card?' }).click();
    const votes = page.getByRole('table', { name: 'Votes' });
    await votes.waitFor();
    await page.getByText(/agreement 4\/4 models/).waitFor();
    const scroller = votes.locator('xpath=..');
    const sizes = await scroller.evaluate((element) => ({
      scroll: element.scrollWidth,
      client: element.clientWidth,
      overflowX: (
        globalThis as unknown as { getComputedStyle(e: unknown): { overflowX: string } }
      ).getComputedStyle(element).overflowX,
    }));
    expect(sizes.overflowX).toBe('auto');
    expect(sizes.client).toBeLessThanOrEqual(360);
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await context.close();
  });
});

describe('a browser whose language tag Intl refuses', () => {
  it('en-US@posix: the page falls back to en-US and works — sign-in, the chart, every page', async () => {
    const context = await stage.browser.newContext({
      timezoneId: 'UTC',
      viewport: { width: 1280, height: 860 },
    });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    // What a POSIX locale makes a browser report, set before any script of the page runs.
    await page.addInitScript(() => {
      const prototype = Object.getPrototypeOf((globalThis as unknown as { navigator: object }).navigator);
      Object.defineProperty(prototype, 'language', { get: () => 'en-US@posix', configurable: true });
      Object.defineProperty(prototype, 'languages', { get: () => ['en-US@posix'], configurable: true });
    });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    // Any page of this browser reports the tag, and Intl refuses it.
    await page.goto(`${stage.base}/api/v1/openapi.json`);
    await expect(page.evaluate('navigator.language')).resolves.toBe('en-US@posix');
    await expect(
      page.evaluate(
        `(() => { try { new Intl.NumberFormat(navigator.language); return 'formatted'; } catch (e) { return e.name; } })()`,
      ),
    ).resolves.toBe('RangeError');
    await installWallet(page, new TestWallet(), 'signIn');
    await page.goto(`${stage.base}/dashboard/`);
    await page.getByRole('button', { name: 'Sign in with Test Wallet' }).click();
    await page.getByText('Spend today').waitFor();
    await page.locator('.chart canvas').waitFor();
    await expect(page.evaluate('navigator.language')).resolves.toBe('en-US');
    for (const title of PAGES) await openPage(page, title);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('when even the default locale cannot format numbers, the page says it could not start', async () => {
    const context = await stage.browser.newContext({ locale: 'en-US', timezoneId: 'UTC' });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    // A library that throws as the page loads (here uPlot, through a broken Intl.NumberFormat).
    await page.addInitScript(() => {
      function Broken(): never {
        throw new RangeError('Incorrect locale information provided');
      }
      Object.defineProperty(Intl, 'NumberFormat', { value: Broken, configurable: true });
    });
    await page.goto(`${stage.base}/dashboard/`);
    const alert = page.getByRole('alert');
    await alert.getByRole('heading', { name: 'The dashboard could not start' }).waitFor();
    await expect(alert.textContent()).resolves.toContain('RangeError: Incorrect locale information provided');
    await context.close();
  });
});
