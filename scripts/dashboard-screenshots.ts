// Regenerates the screenshots of docs/dashboard.md: the service on a temporary embedded database,
// a test wallet signed in through the Wallet Standard in headless Chromium, some activity (keys,
// paid requests over two weeks, a scheduled job, an AI resolution, a test webhook, an endpoint's
// deliveries), then one PNG per page under docs/dashboard/.
//
//   npm run dashboard:screenshots

import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { linkWallet } from '../src/accounts/index.js';
import { createContext, withTransaction } from '../src/context.js';
import { loadDemoMarkets } from '../src/markets/demo/demo.js';
import { recordAccountEvent } from '../src/webhooks/events.js';
import { installWallet, newContext } from '../test/helpers/browser.js';
import {
  openPage,
  signedInPage,
  signedInPhonePage,
  startStage,
  switchMode,
} from '../test/helpers/dashboard-stage.js';
import { TestWallet } from '../test/helpers/wallet.js';
import { depositData } from '../test/webhooks/endpoint-world.js';

const OUT = new URL('../docs/dashboard/', import.meta.url);
const DAY = 86_400_000;

it('writes the dashboard screenshots', async () => {
  const stage = await startStage();
  try {
    const { db } = stage.ctx.database;
    // The sandbox demo markets, as on a first start, for the Markets page.
    await loadDemoMarkets(db, stage.ctx.clock);
    const shot = async (page: Page, name: string) => {
      await page.waitForLoadState('networkidle');
      await page.screenshot({ path: new URL(`${name}.png`, OUT).pathname });
    };

    const signIn = await (await newContext(stage.browser)).newPage();
    await installWallet(signIn, new TestWallet(), 'signIn');
    await signIn.goto(`${stage.base}/dashboard/`);
    await signIn.getByRole('button', { name: /Sign in with/ }).waitFor();
    await shot(signIn, 'sign-in');

    const { page, wallet } = await signedInPage(stage);
    // A first sign-in lands in the sandbox, with its play money and a line on going live.
    await page.locator('.chart canvas').waitFor();
    await shot(page, 'welcome');
    await switchMode(page, 'Live');
    await page.getByRole('heading', { name: 'Fund your account' }).waitFor();
    await shot(page, 'home-live-unfunded');
    const [pair] = await db.query<{ sandbox_account_id: string }>(
      'SELECT sandbox_account_id FROM dashboard_wallets WHERE address = $1',
      [wallet.address],
    );
    const sandbox = pair?.sandbox_account_id as string;
    const bot = await stage.ctx.addKey(sandbox);
    await db.query('UPDATE api_keys SET name = $2 WHERE id = $1', [bot.record.id, 'trading bot']);
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${stage.base}/api/v1${path}`, {
        method,
        headers: {
          authorization: `Bearer ${bot.key}`,
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
    // Two weeks of history, written as the ledger would have (its own times are the database's).
    for (let day = 14; day >= 1; day--) {
      for (let n = 0; n < 3 + ((day * 7) % 11); n++) {
        await db.query(
          `WITH a AS (UPDATE accounts SET balance_micros = balance_micros - $2 WHERE id = $1 RETURNING id, balance_micros)
           INSERT INTO ledger_entries (account_id, kind, amount_micros, balance_after_micros, operation, key_id, request_id, created_at)
           SELECT id, 'charge', -$2::bigint, balance_micros, $3, $4, 'req_history', $5 FROM a`,
          [
            sandbox,
            n % 4 === 0 ? 70_000n : 10_000n,
            n % 4 === 0 ? 'getPriceBatch' : 'getPrice',
            bot.record.id,
            new Date(Date.now() - day * DAY + n * 60_000),
          ],
        );
      }
    }
    for (let i = 0; i < 5; i++) expect((await call('GET', '/price/SOL')).status).toBe(200);
    await call('POST', '/price/batch', { symbols: ['SOL', 'JUP', 'BONK'] });
    const inAnHour = new Date(stage.ctx.clock.now().getTime() + 3_600_000).toISOString();
    await call('POST', '/price/schedule', {
      symbol: 'SOL',
      resolutionTimestamp: inAnHour,
      callbackUrl: `${stage.receiver.url}/hooks`,
    });
    await call('POST', '/ai/resolve', {
      question: 'Will SOL close above $200 on 2026-12-31 (UTC)?',
      outcomes: ['Yes', 'No'],
      context: '[sandbox:votes=0,0,0,1]',
      callbackUrl: `${stage.receiver.url}/hooks`,
    });
    await stage.work();

    await switchMode(page, 'Sandbox');
    await openPage(page, 'Home');
    await page.locator('.chart canvas').waitFor();
    await shot(page, 'home');
    await openPage(page, 'Usage');
    await page.getByRole('table', { name: 'Ledger' }).locator('tbody tr').first().waitFor();
    await shot(page, 'usage');
    await openPage(page, 'Keys');
    await page.getByLabel('Name').fill('analytics');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByLabel('New API key').waitFor();
    await shot(page, 'keys');
    await page.getByRole('button', { name: 'Done' }).click();
    await openPage(page, 'Activity');
    await page.getByRole('table', { name: 'Scheduled price checks' }).waitFor();
    await shot(page, 'activity-jobs');
    await page.getByRole('tab', { name: 'AI requests' }).click();
    await page.getByRole('button', { name: /Will SOL close above/ }).click();
    await page.getByRole('table', { name: 'Votes' }).locator('tbody tr').nth(3).waitFor();
    await shot(page, 'activity-ai');
    await page.getByRole('tab', { name: 'Webhooks' }).click();
    await page.getByLabel('Callback URL').fill(`${stage.receiver.url}/test`);
    await page.getByRole('button', { name: 'Send test webhook' }).click();
    await page.getByText(/^Delivered: 200/).waitFor();
    await shot(page, 'activity-webhooks');
    // An endpoint's deliveries: two delivered, then one its receiver refuses (500), tried twice so far.
    await page.getByLabel('Endpoint URL').fill(`${stage.receiver.url}/events`);
    await page.getByLabel('Description').fill('order service');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('button', { name: 'Done', exact: true }).click();
    const event = () =>
      withTransaction(createContext(db, stage.ctx.clock), (tx) =>
        recordAccountEvent(tx.tx, {
          accountId: sandbox,
          mode: 'sandbox',
          type: 'deposit.credited',
          data: depositData,
          at: stage.ctx.clock.now(),
        }),
      );
    for (let i = 0; i < 2; i++) {
      await event();
      stage.ctx.clock.advance(60_000);
    }
    await stage.work();
    stage.receiver.setHandler((request) => (request.url === '/events' ? 500 : 200));
    await event();
    await stage.work();
    stage.ctx.clock.advance(5_000);
    await stage.work();
    stage.receiver.setHandler(() => 200);
    await page.getByRole('button', { name: 'Deliveries', exact: true }).click();
    const panel = page.getByRole('region', { name: /^Deliveries to / });
    await panel.getByText(/^2 attempts/).click();
    await panel.getByRole('listitem').nth(1).waitFor();
    await page
      .getByRole('table', { name: 'Webhook endpoints' })
      .evaluate((table) =>
        (table as unknown as { scrollIntoView(options: object): void }).scrollIntoView({ block: 'start' }),
      );
    await shot(page, 'activity-webhook-deliveries');
    // Markets: the list by volume, and the first market open (a chart per outcome, its trades).
    await openPage(page, 'Markets');
    // A market's title is a link to its own address (docs/dashboard.md#market-data).
    await page.getByRole('table', { name: 'Markets' }).getByRole('link').first().click();
    await page.locator('figure[data-outcome="0"] .chart canvas').waitFor();
    await page.getByRole('table', { name: 'Trades' }).locator('tbody tr').first().waitFor();
    await page.getByText(/^live, /).waitFor();
    await page
      .locator('section.card')
      .nth(1)
      .evaluate((card) =>
        (card as unknown as { scrollIntoView(options: object): void }).scrollIntoView({ block: 'start' }),
      );
    await shot(page, 'markets');
    await openPage(page, 'Add funds');
    await page.getByRole('button', { name: 'Add play money' }).waitFor();
    await shot(page, 'funds-sandbox');
    await switchMode(page, 'Live');
    await page.getByRole('img', { name: /QR code/ }).waitFor();
    await shot(page, 'funds-live');
    // A second wallet of the user's, linked by signing with it (docs/dashboard.md#your-wallets).
    const [live] = await db.query<{ live_account_id: string }>(
      'SELECT live_account_id FROM dashboard_wallets WHERE address = $1',
      [wallet.address],
    );
    await linkWallet(createContext(db, stage.ctx.clock), {
      accountId: live?.live_account_id as string,
      address: new TestWallet().address,
    });
    await page.reload();
    const wallets = page.getByRole('table', { name: 'Your wallets' });
    await wallets.locator('tbody tr').nth(1).waitFor();
    await page.getByRole('button', { name: 'Link another wallet' }).click();
    await page.getByRole('button', { name: /^Link with/ }).waitFor();
    await page
      .getByRole('heading', { name: 'Your wallets' })
      .evaluate((heading) =>
        (heading as unknown as { scrollIntoView(options: object): void }).scrollIntoView({ block: 'start' }),
      );
    await shot(page, 'funds-wallets');

    // On a phone (a wallet's in-app browser): one column, the navigation behind the menu button.
    const { page: phone } = await signedInPhonePage(stage, 390, 844);
    await phone.locator('.chart canvas').waitFor();
    await shot(phone, 'phone-home');
    await phone.getByRole('button', { name: 'Menu' }).click();
    await phone.getByRole('navigation', { name: 'Pages' }).waitFor();
    await shot(phone, 'phone-menu');
  } finally {
    await stage.close();
  }
});
