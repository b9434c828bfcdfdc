import type { Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext, withTransaction } from '../../src/context.js';
import { chargeAccount } from '../../src/ledger/ledger.js';
import { balanceAlertTask } from '../../src/webhooks/balance-alerts.js';
import { recordAccountEvent } from '../../src/webhooks/events.js';
import { RETRY_DELAYS_MS } from '../../src/webhooks/outbox.js';
import {
  openWebhooksTab,
  type Stage,
  signedInPage,
  signedInPhonePage,
  startStage,
} from '../helpers/dashboard-stage.js';
import { depositData } from '../webhooks/endpoint-world.js';

/**
 * The Webhooks tab's account events in a real browser: an endpoint added to a real HTTPS receiver,
 * its secret shown once, rotated, thresholds set, a balance.low crossing delivered signed with the
 * secret the page showed, and the same tab on a phone; an endpoint's deliveries with their attempts,
 * filtered, paged by cursor and recovered.
 */

let stage: Stage;

beforeAll(async () => {
  stage = await startStage();
});
afterAll(async () => {
  await stage.close();
});

async function sandboxAccountId(page: Page): Promise<string> {
  const session = (await page.evaluate(async () => (await fetch('/dashboard/api/auth/session')).json())) as {
    accounts: { sandbox: { id: string } };
  };
  return session.accounts.sandbox.id;
}

const endpointsTable = (page: Page) => page.getByRole('table', { name: 'Webhook endpoints' });

describe('the Webhooks tab: endpoints, secrets, alerts', () => {
  it('adds an endpoint, shows its secret once, rotates it, sets thresholds, and the event arrives signed', async () => {
    const { page, context } = await signedInPage(stage);
    await openWebhooksTab(page);
    // The catalog, each type with its description and its data's schema folded.
    await page.getByText('balance.low', { exact: true }).first().waitFor();
    await page.getByText('Schema of its data').first().click();
    await page.locator('.catalog details[open] pre').first().waitFor();

    // A new endpoint, for balance.low only, chosen from the catalog.
    const url = `${stage.receiver.url}/events`;
    await page.getByLabel('Endpoint URL').fill(url);
    await page.getByLabel('Description').fill('<b>alerts</b> receiver');
    await page.getByLabel('All, present and future').uncheck();
    await page.getByLabel('balance.low').check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const shown = page.getByLabel('Endpoint signing secret');
    const first = (await shown.textContent()) as string;
    expect(first).toMatch(/^whsec_/);
    await page.getByText('you will not see it again').waitFor();
    const row = endpointsTable(page).getByRole('row').filter({ hasText: url });
    await expect(row.textContent()).resolves.toContain('balance.low');
    // The description is text, not markup.
    await row.getByText('<b>alerts</b> receiver').waitFor();
    expect(await row.locator('b').count()).toBe(0);

    // Gone after a reload: the API never answers it again.
    await page.reload();
    await openWebhooksTab(page);
    await endpointsTable(page).getByRole('row').filter({ hasText: url }).waitFor();
    expect(await page.getByLabel('Endpoint signing secret').count()).toBe(0);
    expect(await page.content()).not.toContain(first);

    // Rotated: a new secret, once.
    await page.getByRole('button', { name: 'Rotate secret', exact: true }).first().click();
    const rotated = (await page.getByLabel('Endpoint signing secret').textContent()) as string;
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(first);
    await page.getByText(/The previous secret keeps signing until/).waitFor();
    await page.getByRole('button', { name: 'Done', exact: true }).click();
    expect(await page.getByLabel('Endpoint signing secret').count()).toBe(0);

    // Thresholds: the sandbox starts with none; 99.5 is saved as 99.50, highest first.
    await page.getByLabel('Threshold 1 (USD)').fill('20');
    await page.getByLabel('Threshold 2 (USD)').fill('99.5');
    await page.getByRole('button', { name: 'Save alerts' }).click();
    await page.getByText('Alerts below $99.50, $20.00.').waitFor();
    await expect(page.getByLabel('Threshold 1 (USD)').inputValue()).resolves.toBe('99.50');
    // A bad amount is the API's refusal, shown.
    await page.getByLabel('Threshold 3 (USD)').fill('0');
    await page.getByRole('button', { name: 'Save alerts' }).click();
    await page.getByRole('alert').filter({ hasText: 'VALIDATION_ERROR' }).waitFor();

    // Spend from 100.00 to 99.00: balance.low for 99.50 reaches the endpoint, signed with the new secret.
    const accountId = await sandboxAccountId(page);
    await chargeAccount(stage.ctx.database.db, { accountId, amountMicros: 1_000_000n, operation: 'test' });
    await balanceAlertTask(createContext(stage.ctx.database.db, stage.ctx.clock)).run(
      stage.ctx.clock.now(),
      new AbortController().signal,
    );
    await stage.work();
    const received = stage.receiver.received.filter((request) => request.url === '/events');
    expect(received).toHaveLength(1);
    const payload = new Webhook(rotated).verify(
      received[0]?.body as string,
      received[0]?.headers as Record<string, string>,
    ) as { type: string; data: { thresholdUsd: string } };
    expect(payload).toMatchObject({ type: 'balance.low', data: { thresholdUsd: '99.50' } });

    // Its delivery is listed with the others.
    await page.reload();
    await openWebhooksTab(page);
    const deliveries = page.getByRole('table', { name: 'Webhook deliveries' });
    await deliveries.getByRole('row').filter({ hasText: 'balance.low' }).waitFor();

    // Disabled: the banner says so; enabled again: gone.
    await row.getByRole('button', { name: 'Disable' }).click();
    const banner = page.getByRole('alert').filter({ hasText: 'An endpoint is disabled' });
    await banner.waitFor();
    await expect(banner.textContent()).resolves.toContain(url);
    await row.getByRole('button', { name: 'Enable' }).click();
    await banner.waitFor({ state: 'detached' });

    // Deleted after a confirmation.
    await row.getByRole('button', { name: 'Delete' }).click();
    await row.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByText(/^Deleted /).waitFor();
    await page.getByText('None yet: add one below.').waitFor();
    await context.close();
  });

  it('at 390 px the tab fits the screen: endpoints, a disabled one’s banner, the catalog open, the alerts', async () => {
    const { context, page } = await signedInPhonePage(stage, 390);
    await openWebhooksTab(page);
    const url = `${stage.receiver.url}/a-rather-long-path/for-the-phone/${'x'.repeat(80)}`;
    await page.getByLabel('Endpoint URL').fill(url);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByLabel('Endpoint signing secret').waitFor();
    await endpointsTable(page).getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('alert').filter({ hasText: 'An endpoint is disabled' }).waitFor();
    await page.getByText('Schema of its data').first().click();
    await page.locator('.catalog details[open] pre').waitFor();
    await page.getByLabel('Threshold 1 (USD)').waitFor();
    const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'));
    expect(overflow).toBeLessThanOrEqual(0);
    // The secret and the banner wrap within the screen.
    for (const locator of [
      page.getByLabel('Endpoint signing secret'),
      page.getByRole('alert').filter({ hasText: 'An endpoint is disabled' }),
      page.getByText(/^Copy the secret of/),
      page.getByText(/^Disabled https:/),
    ]) {
      const box = await locator.boundingBox();
      expect(box && box.x + box.width).toBeLessThanOrEqual(390);
    }
    await context.close();
  });
});

describe("an endpoint's deliveries in the Webhooks tab", () => {
  it('lists real failing deliveries with their attempts, filters and pages them, recovers them, at 390 px too', async () => {
    const { page, context } = await signedInPage(stage);
    const { db } = stage.ctx.database;
    const clock = stage.ctx.clock;
    let failing = false;
    stage.receiver.setHandler((request) => (request.url === '/panel' && failing ? 500 : 200));
    try {
      await openWebhooksTab(page);
      const url = `${stage.receiver.url}/panel`;
      await page.getByLabel('Endpoint URL').fill(url);
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await page.getByLabel('Endpoint signing secret').waitFor();
      await page.getByRole('button', { name: 'Done', exact: true }).click();
      const accountId = await sandboxAccountId(page);
      const event = () =>
        withTransaction(createContext(db, clock), (tx) =>
          recordAccountEvent(tx.tx, {
            accountId,
            mode: 'sandbox',
            type: 'deposit.credited',
            data: depositData,
            at: clock.now(),
          }),
        );
      // Eleven delivered at once, then two the receiver refuses with 500 through all eight attempts;
      // the clock walks each retry delay, the page's session kept alive on the way.
      for (let i = 0; i < 11; i++) {
        await event();
        clock.advance(1000);
      }
      await stage.work();
      failing = true;
      const failedSince = clock.now();
      await event();
      clock.advance(1000);
      await event();
      await stage.work();
      for (const delay of RETRY_DELAYS_MS) {
        clock.advance(delay);
        await page.evaluate(() => fetch('/dashboard/api/auth/session').then((r) => r.status));
        await stage.work();
      }
      // A receiver's words may reach an attempt's error: shown as text, never as markup.
      await db.query(
        `UPDATE webhook_attempts SET status_code = NULL, error = '<b>tls</b>: <img src=x>'
          WHERE attempt = 1 AND delivery_id = (SELECT id FROM webhook_deliveries WHERE url = $1
            ORDER BY created_at DESC, id DESC LIMIT 1)`,
        [url],
      );

      await endpointsTable(page)
        .getByRole('row')
        .filter({ hasText: url })
        .getByRole('button', { name: 'Deliveries' })
        .click();
      const panel = page.getByRole('region', { name: `Deliveries to ${url}` });
      const rows = panel.getByRole('table', { name: 'Endpoint deliveries' }).locator('tbody tr');
      await rows.nth(9).waitFor();
      expect(await rows.count()).toBe(10);
      // Newest first: the two failed, each with its eight attempts.
      await expect(rows.nth(0).textContent()).resolves.toContain('CALLBACK_FAILED');
      await expect(rows.nth(1).textContent()).resolves.toContain('8 attempts, last: 500');
      await expect(rows.nth(2).textContent()).resolves.toContain('DELIVERED');
      await rows
        .nth(0)
        .getByText(/^8 attempts/)
        .click();
      const attempts = rows
        .nth(0)
        .getByRole('list', { name: /^Attempts of / })
        .getByRole('listitem');
      await attempts.nth(7).waitFor();
      expect(await attempts.allTextContents()).toEqual([
        expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC: <b>tls<\/b>: <img src=x> in \d+ ms$/),
        ...Array.from({ length: 7 }, () => expect.stringMatching(/UTC: status 500 in \d+ ms$/)),
      ]);
      expect(await panel.locator('b, img').count()).toBe(0);
      // More by the list's cursor: the three oldest.
      await panel.getByRole('button', { name: 'More deliveries' }).click();
      await rows.nth(12).waitFor();
      expect(await rows.count()).toBe(13);
      expect(await panel.getByRole('button', { name: 'More deliveries' }).count()).toBe(0);
      // The twin's cursor is the API's signed kind: handed to another filter, it is refused there too.
      const refused = await page.evaluate(async () => {
        const base = '/dashboard/api/sandbox/webhooks/endpoints';
        const { endpoints } = (await (await fetch(base)).json()) as { endpoints: { id: string }[] };
        const list = `${base}/${endpoints[0]?.id}/deliveries?limit=1`;
        const { nextCursor } = (await (await fetch(list)).json()) as { nextCursor: string };
        const answer = await fetch(`${list}&status=DELIVERED&cursor=${nextCursor}`);
        return { status: answer.status, body: await answer.json() };
      });
      expect(refused).toMatchObject({
        status: 400,
        body: { code: 'VALIDATION_ERROR', details: { problems: [{ path: 'query.cursor' }] } },
      });

      // Filtered by status, then by event type.
      await panel.getByLabel('Status').selectOption('CALLBACK_FAILED');
      await rows.nth(2).waitFor({ state: 'detached' });
      expect(await rows.allTextContents()).toEqual([
        expect.stringContaining('CALLBACK_FAILED'),
        expect.stringContaining('CALLBACK_FAILED'),
      ]);
      await panel.getByLabel('Event type').selectOption('balance.low');
      await panel.getByText('No delivery matches.').waitFor();
      await panel.getByLabel('Event type').selectOption('');

      // Recovered: the receiver answers 200 again, and both are sent once more and delivered.
      failing = false;
      const since = new Date(failedSince.getTime() - 60_000).toISOString().slice(0, 16);
      await panel.getByLabel(/^Send failed deliveries again since/).fill(since);
      await panel.getByRole('button', { name: 'Recover' }).click();
      await panel.getByText(/^2 failed deliveries since .* sent again\.$/).waitFor();
      await stage.work();
      await panel.getByLabel('Status').selectOption('DELIVERED');
      await rows.nth(9).waitFor();
      await expect(rows.nth(0).textContent()).resolves.toContain('9 attempts, last: 200');
      await expect(rows.nth(1).textContent()).resolves.toContain('9 attempts, last: 200');
      expect(stage.receiver.received.filter((request) => request.url === '/panel')).toHaveLength(11 + 16 + 2);
      // More than seven days back is the service's refusal, shown.
      await panel.getByLabel(/^Send failed deliveries again since/).fill('2020-01-01T00:00');
      await panel.getByRole('button', { name: 'Recover' }).click();
      await panel.getByRole('alert').filter({ hasText: 'VALIDATION_ERROR' }).waitFor();

      // At 390 px: the panel, an attempts list open, the recover form, and nothing wider than the screen.
      await page.setViewportSize({ width: 390, height: 800 });
      await rows
        .nth(0)
        .getByText(/^9 attempts/)
        .click();
      await rows.nth(0).getByRole('list').getByRole('listitem').nth(8).waitFor();
      const overflow = Number(
        await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'),
      );
      expect(overflow).toBeLessThanOrEqual(0);
      for (const locator of [
        panel,
        panel.getByRole('button', { name: 'Recover' }),
        panel.getByRole('heading'),
      ]) {
        const box = await locator.boundingBox();
        expect(box && box.x + box.width).toBeLessThanOrEqual(390);
      }
    } finally {
      stage.receiver.setHandler(() => 200);
      await context.close();
    }
  });
});
