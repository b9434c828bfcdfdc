import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_FILE } from '../../src/attestations/registry.js';
import { buildReport } from '../../src/evaluation/report.js';
import { publishScorecard } from '../../src/evaluation/scorecard.js';
import { scorecardSummary } from '../../src/evaluation/summary.js';
import {
  keyRow,
  openPage,
  type SignedInPage,
  type Stage,
  signedInPage,
  startStage,
  switchMode,
  TEST_TREASURY,
} from '../helpers/dashboard-stage.js';
import { balanceOf } from '../helpers/ledger.js';

/**
 * The dashboard in a real browser (headless Chromium): a Wallet Standard wallet registered in the
 * page signs in with a real Ed25519 key; then every page, in the order a new user meets them.
 */

let stage: Stage;
let user: SignedInPage;
let sandboxAccountId: string;

beforeAll(async () => {
  stage = await startStage();
});
afterAll(async () => {
  await stage.close();
});

const api = (key: string, method: string, path: string, body?: unknown) =>
  fetch(`${stage.base}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });

describe('signing in', () => {
  it('a wallet with solana:signIn: the account is created, the session cookie is HttpOnly and Strict', async () => {
    user = await signedInPage(stage, 'signIn');
    const { page, wallet, context } = user;
    // A first sign-in lands where the play money is, and says how to go live.
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toMatch(/^Home/);
    expect(new URL(page.url()).pathname).toBe('/dashboard/sandbox/');
    await expect(page.locator('.stat').first().textContent()).resolves.toContain('$100.00');
    await page.getByText(/^Welcome: this is your sandbox, with \$100\.00 of play money/).waitFor();
    await page.getByRole('status').getByRole('link', { name: 'add funds' }).waitFor();
    const [account] = await stage.ctx.database.db.query<{ id: string; mode: string }>(
      'SELECT id, mode FROM accounts WHERE wallet_address = $1',
      [wallet.address],
    );
    expect(account?.mode).toBe('live');
    const [pair] = await stage.ctx.database.db.query<{ sandbox_account_id: string }>(
      'SELECT sandbox_account_id FROM dashboard_wallets WHERE address = $1',
      [wallet.address],
    );
    sandboxAccountId = pair?.sandbox_account_id as string;
    await expect(page.getByRole('navigation', { name: 'Account' }).textContent()).resolves.toContain(
      'Sandbox · $100.00',
    );
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({
      name: 'sibyl_session',
      httpOnly: true,
      sameSite: 'Strict',
      path: '/dashboard',
    });
    // Page scripts cannot read it.
    expect(await page.evaluate('document.cookie')).toBe('');
  });

  it('Live, never funded: a call to fund the account, and no low-balance warning', async () => {
    const { page } = user;
    await switchMode(page, 'Live');
    await page.getByRole('heading', { name: 'Fund your account' }).waitFor();
    await expect(page.locator('.stat').first().textContent()).resolves.toContain('$0.00');
    expect(await page.getByText(/Your balance is below/).count()).toBe(0);
    expect(await page.getByText(/^Welcome/).count()).toBe(0);
    await page.getByRole('link', { name: 'Add funds' }).first().click();
    await page.getByRole('heading', { level: 1, name: /^Add funds/ }).waitFor();
    await openPage(page, 'Home');
  });

  it('a wallet with only solana:signMessage signs in too', async () => {
    const other = await signedInPage(stage, 'signMessage');
    await expect(other.page.locator('.wallet').textContent()).resolves.toBe(
      `${other.wallet.address.slice(0, 4)}…${other.wallet.address.slice(-4)}`,
    );
    await other.context.close();
  });

  it('without a wallet, the sign-in page says how to get one', async () => {
    const context = await stage.browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    await page.goto(`${stage.base}/dashboard/`);
    await page.getByText('No Solana wallet found in this browser').waitFor();
    await context.close();
  });
});

describe('the pages', () => {
  let key: string;

  it('Keys: creates a key with the secret shown once; the key pays for /api/v1/price/SOL', async () => {
    const { page } = user;
    await switchMode(page, 'Sandbox');
    await openPage(page, 'Keys');
    await page.getByLabel('Name').fill('browser key');
    // The data permissions are ticked; `keys`, which makes keys, is not.
    await expect(page.getByRole('checkbox', { name: /^keys/ }).isChecked()).resolves.toBe(false);
    await page.getByRole('checkbox', { name: 'batch' }).uncheck();
    await page.getByLabel('Requests per day').fill('1000');
    await page.getByRole('button', { name: 'Create key' }).click();
    key = (await page.getByLabel('New API key').textContent()) as string;
    expect(key).toMatch(/^pk_test_/);
    await page.getByRole('button', { name: 'Copy key' }).waitFor();
    await page
      .getByRole('table', { name: 'API keys' })
      .getByRole('cell', { name: 'browser key', exact: true })
      .waitFor();
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.getByLabel('New API key').count()).toBe(0);
    const price = await api(key, 'GET', '/price/SOL');
    expect(price.status).toBe(200);
    expect(await price.json()).toMatchObject({ costUsd: '0.01', remainingBalanceUsd: '99.99' });
    expect(((await (await api(key, 'GET', '/keys')).json()) as { code: string }).code).toBe(
      'PERMISSION_DENIED',
    );
  });

  it('Home: the balance and today’s spend, and the chart', async () => {
    const { page } = user;
    await openPage(page, 'Home');
    await page.getByText('1 paid requests').first().waitFor();
    await expect(page.locator('.stat').first().textContent()).resolves.toContain('$99.99');
    await page.locator('.chart canvas').waitFor();
  });

  it('Usage: the charge per operation and per key, in the ledger, and in the CSV export', async () => {
    const { page } = user;
    await openPage(page, 'Usage');
    await page.getByRole('button', { name: 'Per operation' }).click();
    const usage = page.getByRole('table', { name: 'Usage' });
    // Operations and keys as a person reads them: words and names, not ids.
    await usage.getByRole('cell', { name: 'Price', exact: true }).waitFor();
    await expect(usage.locator('tbody tr').first().textContent()).resolves.toBe('Price1$0.01$0.00$0.01');
    await page.getByRole('button', { name: 'Per key' }).click();
    await usage.getByRole('cell', { name: 'browser key', exact: true }).waitFor();
    const ledger = page.getByRole('table', { name: 'Ledger' });
    await expect(ledger.locator('tbody tr').first().textContent()).resolves.toMatch(
      /ChargePrice−\$0\.01\$99\.99browser key$/,
    );
    await expect(ledger.locator('tbody tr').last().textContent()).resolves.toMatch(
      /DepositPlay money\$100\.00\$100\.00—$/,
    );
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Export CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^sibyl-sandbox-transactions-\d{4}-\d{2}-\d{2}\.csv$/);
    expect(readFileSync(await download.path(), 'utf8')).toMatch(/,charge,-0\.01,99\.99,getPrice,req_/);
  });

  it('Keys: rotates the key (the old one in its grace period) and revokes the new one', async () => {
    const { page } = user;
    await openPage(page, 'Keys');
    // The key paid for a price: it was used, and says so.
    const lastUsed = (row: Locator) => row.locator('td').nth(4).textContent();
    await keyRow(page, 'browser key').waitFor();
    await expect(lastUsed(keyRow(page, 'browser key'))).resolves.toMatch(/^(just now|\d+ min ago)$/);
    await keyRow(page, 'browser key').getByRole('button', { name: 'Rotate' }).click();
    const rotated = (await page.getByLabel('New API key').textContent()) as string;
    expect(rotated).toMatch(/^pk_test_/);
    expect(rotated).not.toBe(key);
    await page.getByRole('cell', { name: 'rotated (grace period)' }).waitFor();
    const [fresh] = await stage.ctx.database.db.query<{ id: string }>(
      'SELECT id FROM api_keys WHERE rotated_from IS NOT NULL AND account_id = $1',
      [sandboxAccountId],
    );
    await page.getByRole('button', { name: 'Done' }).click();
    const row = page.locator(`tr[data-key-id="${fresh?.id}"]`);
    await row.waitFor();
    await expect(lastUsed(row)).resolves.toBe('never');
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Yes, revoke' }).click();
    await row.getByRole('cell', { name: 'revoked' }).first().waitFor();
    await page.getByText('Revoked “browser key”: it is refused from now on.').waitFor();
    // A revoked key shows "revoked" where its expiry was, not a time to come.
    await expect(row.locator('td').nth(5).textContent()).resolves.toBe('revoked');
    const refused = await api(rotated, 'GET', '/price/SOL');
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { code: string }).code).toBe('API_KEY_REVOKED');
  });

  it('Activity: cancels a scheduled job, with its refund', async () => {
    const { page } = user;
    const { key: jobKey } = await stage.ctx.addKey(sandboxAccountId);
    const job = await api(jobKey, 'POST', '/price/schedule', {
      symbol: 'SOL',
      resolutionTimestamp: new Date(stage.ctx.clock.now().getTime() + 3_600_000).toISOString(),
      callbackUrl: `${stage.receiver.url}/jobs`,
    });
    const { jobId } = (await job.json()) as { jobId: string };
    await openPage(page, 'Activity');
    await page.getByRole('row').filter({ hasText: jobId }).getByRole('button', { name: 'Cancel' }).click();
    await page.getByText(`Cancelled ${jobId}: $0.05 refunded`).waitFor();
    await page
      .getByRole('table', { name: 'Scheduled price checks' })
      .getByRole('cell', { name: 'CANCELLED' })
      .waitFor();
  });

  it('Activity: AI requests with each model’s vote and reasoning', async () => {
    const { page } = user;
    const { key: aiKey } = await stage.ctx.addKey(sandboxAccountId);
    const submitted = await api(aiKey, 'POST', '/ai/resolve', {
      question: 'Will the browser test pass?',
      outcomes: ['Yes', 'No'],
      context: '[sandbox:votes=0,0,0,1] [sandbox:price=SOL@2026-01-01T00:00:00Z]',
      callbackUrl: `${stage.receiver.url}/ai`,
    });
    expect(submitted.status).toBe(200);
    await stage.work();
    await openPage(page, 'Activity');
    await page.getByRole('tab', { name: 'AI requests' }).click();
    await page.getByRole('button', { name: 'Will the browser test pass?' }).click();
    const votes = page.getByRole('table', { name: 'Votes' });
    await votes.getByRole('cell', { name: 'sandbox/alpha' }).waitFor();
    expect(await votes.locator('tbody tr').count()).toBe(4);
    // Each vote as its outcome's label; agreement as the models that agreed.
    await expect(votes.locator('tbody tr').nth(0).textContent()).resolves.toMatch(/^sandbox\/alphaYes0\.90/);
    await expect(votes.locator('tbody tr').nth(3).textContent()).resolves.toMatch(/^sandbox\/deltaNo0\.90/);
    await page.getByText(/Winner: Yes, agreement 3\/4 models, confidence 0\.90/).waitFor();
    // Each vote's evidence: the cited page as a link opening in a new tab, without access to this
    // page, and Sibyl's tool call with its arguments and answer, as text.
    const first = votes.locator('tbody tr').nth(0);
    const link = first.getByRole('link', { name: 'Sandbox source' });
    expect(await link.getAttribute('href')).toMatch(/^https:\/\/example\.com\/sandbox\/[0-9a-f]{16}$/);
    expect(await link.getAttribute('target')).toBe('_blank');
    expect(await link.getAttribute('rel')).toBe('noopener noreferrer');
    // Whether the model was offered web search, with the searches it reports.
    await expect(first.locator('td').nth(5).textContent()).resolves.toBe('on (1)');
    // (The stored JSON's keys come back in the database's order.)
    const text = await first.textContent();
    expect(text).toMatch(/sibyl_price\(\{[^)]*"symbol":"SOL"[^)]*\}\) → \{[^}]*"status":"no_data"/);
    expect(text).toContain('no data: Sibyl has no stored price for SOL at 2026-01-01T00:00:00.000Z');
    await expect(first.textContent()).resolves.toContain(
      'A simulated source on the question: Will the browser test pass?',
    );
  });

  it('Activity: the published AI scorecard beside the AI requests', async () => {
    const { page } = user;
    await page.getByText('No scorecard has been published yet.').waitFor();
    // Four questions: three determined 4/4 at 0.9 (two right), one split.
    const vote = (position: number, outcomeIndex: number | null) => ({
      position,
      model: `sandbox/m${position}`,
      outcomeIndex,
      confidence: 0.9,
      reasoning: 'r',
      latencyMs: 10,
      error: null,
      usage: null,
      evidence: [],
      searches: null,
      search: null,
      abstainReason: null,
    });
    const question = (id: string, answer: number, votes: (number | null)[]) => ({
      id,
      category: 'sports',
      outcomes: ['Yes', 'No'],
      answer,
      votes: votes.map((v, i) => vote(i, v)),
    });
    const results = [
      question('a', 0, [0, 0, 0, 0]),
      question('b', 1, [1, 1, 1, 1]),
      question('c', 1, [0, 0, 0, 0]),
      question('d', 0, [0, 1, null, null]),
    ];
    const report = buildReport(results, {
      set: { format: 'jsonl', questions: [], skipped: {} },
      mode: 'sandbox',
      modelsUsed: ['sandbox/m0', 'sandbox/m1', 'sandbox/m2', 'sandbox/m3'],
      confidenceThreshold: 0.75,
      target: 0.6,
      interrupted: false,
      startedAt: new Date(),
      finishedAt: new Date(),
      cachedAnswers: 0,
      askedAnswers: 16,
    });
    await publishScorecard(stage.ctx.database.db, scorecardSummary(report));
    await page.getByRole('tab', { name: 'Webhooks' }).click();
    await page.getByRole('tab', { name: 'AI requests' }).click();
    const card = page
      .locator('section.card')
      .filter({ has: page.getByRole('heading', { name: 'AI scorecard' }) });
    // It names the models it measured, and that sandbox ones say nothing of live answers.
    await card
      .getByText(
        'Measured on the sandbox models: sandbox/m0, sandbox/m1, sandbox/m2, sandbox/m3 — deterministic ' +
          'stand-ins, not the live providers: these figures say nothing of live answers.',
      )
      .waitFor();
    await card.getByText(/^4 questions \(jsonl set\), evaluated/).waitFor();
    await expect(card.locator('.stat').nth(0).textContent()).resolves.toBe('Accuracy66.7%of 3 determined');
    await expect(card.locator('.stat').nth(1).textContent()).resolves.toBe('Coverage75.0%share determined');
    await card.getByText('Lowest threshold reaching 60.0% accuracy: 0.50.').waitFor();
    const rows = card.getByRole('table', { name: 'Thresholds' }).locator('tbody tr');
    expect(await rows.count()).toBe(10);
    await expect(rows.nth(0).textContent()).resolves.toBe('0.5075.0%66.7%');
    await expect(rows.nth(9).textContent()).resolves.toBe('0.950.0%—');
    // One scorecard per mode: the sandbox evaluation never shows on the live page.
    await switchMode(page, 'Live');
    await card.getByText('No scorecard has been published yet.').waitFor();
    await expect(card.getByText(/Accuracy/).count()).resolves.toBe(0);
    await switchMode(page, 'Sandbox');
    await card.getByText(/^Measured on the sandbox models/).waitFor();
  });

  it('Activity: the attestation key of the mode, as GET /attestation/keys publishes it, and never its secret', async () => {
    const { page } = user;
    const published = (await (await fetch(`${stage.base}/api/v1/attestation/keys`)).json()) as {
      enabled: boolean;
      live: string | null;
      sandbox: string | null;
    };
    const mode = new URL(page.url()).pathname.split('/')[2] === 'live' ? 'live' : 'sandbox';
    const card = page
      .locator('section.card')
      .filter({ has: page.getByRole('heading', { name: 'Attestation key' }) });
    if (published.enabled) {
      const shown = card.locator('code.key');
      await shown.waitFor();
      expect(await shown.textContent()).toBe(published[mode]);
      expect(published[mode]).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    } else {
      await card.getByText('This service does not sign its answers').waitFor();
    }
    // On the embedded database the secret is a file beside the data: not a byte of it on the page.
    const { dataDir } = stage.ctx.database.db;
    const file = dataDir ? join(dataDir, KEY_FILE) : null;
    if (file && existsSync(file)) {
      const secret = readFileSync(file, 'utf8').trim();
      expect(secret.length).toBeGreaterThan(40);
      expect(await page.content()).not.toContain(secret);
    }
  });

  it('Activity: sends a test webhook, redelivers it, reveals and rotates the signing secret', async () => {
    const { page } = user;
    await page.getByRole('tab', { name: 'Webhooks' }).click();
    const received = stage.receiver.received.length;
    await page.getByLabel('Callback URL').fill(`${stage.receiver.url}/test`);
    await page.getByRole('button', { name: 'Send test webhook' }).click();
    await page.getByText(/^Delivered: 200 in \d+ ms$/).waitFor();
    expect(stage.receiver.received.length).toBe(received + 1);
    // The delivery's id is the event's webhook-id.
    const deliveryId = stage.receiver.received.at(-1)?.headers['webhook-id'] as string;
    expect(JSON.parse(stage.receiver.received.at(-1)?.body ?? '{}')).toMatchObject({ type: 'test' });
    await page
      .getByRole('row')
      .filter({ hasText: deliveryId })
      .getByRole('button', { name: 'Redeliver' })
      .click();
    await page.getByText(`Sending ${deliveryId} again now, with the same webhook-id.`).waitFor();
    await page.getByRole('heading', { name: new RegExp(`^${deliveryId}: PENDING`) }).waitFor();
    await stage.work();
    expect(stage.receiver.received.length).toBe(received + 2);
    expect(stage.receiver.received.at(-1)?.headers['webhook-id']).toBe(deliveryId);
    await page.getByRole('tab', { name: 'AI requests' }).click();
    await page.getByRole('tab', { name: 'Webhooks' }).click();
    await page.getByRole('button', { name: deliveryId, exact: true }).click();
    const attempts = page.getByRole('table', { name: 'Attempts' }).locator('tbody tr');
    await attempts.nth(1).waitFor();
    expect(await attempts.count()).toBe(2);

    await page.getByRole('button', { name: 'Reveal secret' }).click();
    const secret = (await page.getByLabel('Webhook signing secret').textContent()) as string;
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByText(/The previous secret keeps signing until/).waitFor();
    expect(await page.getByLabel('Webhook signing secret').textContent()).not.toBe(secret);
  });

  it('Add funds: play money in the sandbox; the address, QR code and Solana Pay link live', async () => {
    const { page } = user;
    await openPage(page, 'Add funds');
    const modes = page.getByRole('navigation', { name: 'Account' });
    // The header follows the balance, which the API calls above spent from.
    const before = Number(await balanceOf(stage.ctx.database.db, sandboxAccountId)) / 1e6;
    await modes.getByText(`Sandbox · $${before.toFixed(2)}`).waitFor();
    await page.getByRole('button', { name: 'Add play money' }).click();
    await modes.getByText(`Sandbox · $${(before + 100).toFixed(2)}`).waitFor();
    await page
      .getByText(`Added $100.00 of play money: the balance is $${(before + 100).toFixed(2)}.`)
      .waitFor();
    await switchMode(page, 'Live');
    await page.getByText(TEST_TREASURY, { exact: true }).waitFor();
    await page.getByRole('img', { name: /QR code: Solana Pay link/ }).waitFor();
    await page.getByText('Deposits are credited by the operator', { exact: false }).waitFor();
    const link = await page.getByRole('link', { name: 'USDC' }).getAttribute('href');
    expect(link).toMatch(
      new RegExp(
        `^solana:${TEST_TREASURY}\\?spl-token=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v&reference=\\w+&`,
      ),
    );
  });

  it('signs out: the session ends on the server, and the sign-in page is back', async () => {
    const { page, context } = user;
    const [cookie] = await context.cookies();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in with your Solana wallet' }).waitFor();
    const after = await fetch(`${stage.base}/dashboard/api/auth/session`, {
      headers: { cookie: `sibyl_session=${cookie?.value}`, 'sec-fetch-site': 'same-origin' },
    });
    expect(after.status).toBe(401);
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in with your Solana wallet' }).waitFor();
    await context.close();
  });
});
