import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { createAiQueue } from '../../src/ai/queue.js';
import { createResolver } from '../../src/ai/resolver.js';
import { silentLog } from '../../src/logger.js';
import { sibylData } from '../../src/ports.js';
import { WorkQueue } from '../../src/queue/queue.js';
import { deliveryQueueHandler } from '../../src/webhooks/delivery.js';
import { webhookOutbox } from '../../src/webhooks/outbox.js';
import { clearSecretBox } from '../../src/webhooks/secret-box.js';
import type { WebhookTransport } from '../../src/webhooks/transport-port.js';
import { installWallet, launchBrowser, newContext, type WalletKind } from './browser.js';
import { createTestContext, type TestContext } from './context.js';
import { DASHBOARD_TEST_CONFIG } from './dashboard.js';
import { type HttpsReceiver, loopbackTransport, startHttpsReceiver } from './https-receiver.js';
import { TestWallet } from './wallet.js';

/** A treasury address for the funds page (any valid base58 public key). */
export const TEST_TREASURY = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

/**
 * Everything a browser test of the dashboard needs: the service listening on loopback (a real
 * database, the injected clock), a real HTTPS webhook receiver, the worker's AI and delivery
 * queues to drain by hand, and a headless Chromium.
 */
export interface Stage {
  ctx: TestContext;
  base: string;
  receiver: HttpsReceiver;
  /** The service's guarded transport to the receiver (for a worker a test starts itself). */
  transport: WebhookTransport;
  browser: Browser;
  /** Runs what the worker would: AI resolutions, then webhook deliveries. */
  work(): Promise<void>;
  close(): Promise<void>;
}

/** `config`: settings over the stage's own (the deposit watcher's, for one). */
export async function startStage(options: { config?: Record<string, string> } = {}): Promise<Stage> {
  const receiver = await startHttpsReceiver();
  const transport: WebhookTransport = await loopbackTransport(5000);
  const ctx = await createTestContext({
    // The receiver is on loopback: a deployment that allows private targets (docs/webhooks.md).
    config: {
      ...DASHBOARD_TEST_CONFIG,
      DEPOSIT_ADDRESS: TEST_TREASURY,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      ...options.config,
    },
    app: { webhookTransport: transport, secrets: clearSecretBox },
  });
  const base = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { db } = ctx.database;
  const deliveries = new WorkQueue(
    deliveryQueueHandler({
      db,
      clock: ctx.clock,
      log: silentLog,
      transport,
      secrets: clearSecretBox,
      settings: { concurrency: 4, leaseMs: 30_000 },
    }),
    { db, clock: ctx.clock, log: silentLog },
  );
  const ai = createAiQueue({
    db,
    clock: ctx.clock,
    log: silentLog,
    resolver: createResolver(ctx.config.ai, ctx.clock, sibylData(ctx.config, ctx.database.db, ctx.clock)),
    callbacks: webhookOutbox,
    config: ctx.config.ai,
  });
  const browser = await launchBrowser();
  return {
    ctx,
    base,
    receiver,
    transport,
    browser,
    async work() {
      await ai.drain();
      await deliveries.drain();
    },
    async close() {
      await browser.close();
      await ctx.close();
      await transport.close();
      await receiver.close();
    },
  };
}

export interface SignedInPage {
  context: BrowserContext;
  page: Page;
  wallet: TestWallet;
}

/** A new browser context whose page signs in with a new wallet of `kind`, and waits for the home page. */
export async function signedInPage(stage: Stage, kind: WalletKind = 'signIn'): Promise<SignedInPage> {
  return signIn(stage, await newContext(stage.browser), kind);
}

/** The same on a phone: a touch screen `width` × `height` px (a wallet's in-app browser). */
export async function signedInPhonePage(stage: Stage, width: number, height = 800): Promise<SignedInPage> {
  const context = await stage.browser.newContext({
    locale: 'en-US',
    timezoneId: 'UTC',
    viewport: { width, height },
    deviceScaleFactor: 1,
    isMobile: true,
    hasTouch: true,
  });
  return signIn(stage, context, 'signIn');
}

async function signIn(stage: Stage, context: BrowserContext, kind: WalletKind): Promise<SignedInPage> {
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  const wallet = new TestWallet();
  const name = await installWallet(page, wallet, kind);
  await page.goto(`${stage.base}/dashboard/`);
  await page.getByRole('button', { name: `Sign in with ${name}` }).click();
  await page.getByText('Spend today').waitFor();
  return { context, page, wallet };
}

export type PageTitle = 'Home' | 'Add funds' | 'Usage' | 'Keys' | 'Activity' | 'Markets';

/**
 * Follows the navigation to a page; on a narrow screen, through the menu button that folds it (then
 * closed again by the navigation).
 */
export async function openPage(page: Page, title: PageTitle): Promise<void> {
  const menu = page.getByRole('button', { name: 'Menu' });
  if (await menu.isVisible()) {
    if ((await menu.getAttribute('aria-expanded')) !== 'true') await menu.click();
  }
  await page
    .getByRole('navigation', { name: 'Pages' })
    .getByRole('link', { name: title, exact: true })
    .click();
  await page.getByRole('heading', { level: 1, name: new RegExp(`^${title}`) }).waitFor();
}

/** The row of the key named `name` on the Keys page (its buttons say what they do, not the name). */
export function keyRow(page: Page, name: string): Locator {
  return page
    .getByRole('table', { name: 'API keys' })
    .getByRole('row')
    .filter({ has: page.getByRole('cell', { name, exact: true }) });
}

/** Opens the Activity page's Webhooks tab and waits for its endpoints. */
export async function openWebhooksTab(page: Page): Promise<void> {
  await openPage(page, 'Activity');
  await page.getByRole('tab', { name: 'Webhooks' }).click();
  await page.getByRole('heading', { name: 'Endpoints' }).waitFor();
}

export async function switchMode(page: Page, mode: 'Live' | 'Sandbox'): Promise<void> {
  await page
    .getByRole('navigation', { name: 'Account' })
    .getByRole('link', { name: new RegExp(`^${mode}`) })
    .click();
  await page.getByText(mode.toLowerCase(), { exact: true }).first().waitFor();
}
