import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  keyRow,
  openPage,
  type SignedInPage,
  type Stage,
  signedInPage,
  startStage,
  switchMode,
} from '../helpers/dashboard-stage.js';

/**
 * Editing a key on the Keys page, in a real browser: the form opens with the key's settings, sends
 * only what changed (PATCH), and the change takes effect at the API at once.
 */

let stage: Stage;
let user: SignedInPage;

beforeAll(async () => {
  stage = await startStage();
  user = await signedInPage(stage, 'signIn');
});
afterAll(async () => {
  await stage.close();
});

const price = (key: string) =>
  fetch(`${stage.base}/api/v1/price/SOL`, { headers: { authorization: `Bearer ${key}` } });

interface KeyView {
  id: string;
  name: string;
  permissions: string[];
  allowedIps: string[];
  ipRestrictionEnabled: boolean;
  quotas: { dailyRequests: number | null; monthlySpendUsd: string | null };
}

async function keyNamed(key: string, name: string): Promise<KeyView> {
  const answer = await fetch(`${stage.base}/api/v1/keys`, { headers: { authorization: `Bearer ${key}` } });
  const { keys } = (await answer.json()) as { keys: KeyView[] };
  return keys.find((k) => k.name === name) as KeyView;
}

describe('editing a key', () => {
  let secret: string;

  it('opens with the key’s settings and saves only what changed', async () => {
    const { page } = user;
    await switchMode(page, 'Sandbox');
    await openPage(page, 'Keys');
    const create = page.getByRole('form', { name: 'Create a key' });
    await create.getByLabel('Name').fill('bot');
    await create.getByLabel('Requests per day').fill('500');
    // `keys` is asked for explicitly: a new key has the data permissions only.
    await expect(create.getByRole('checkbox', { name: /^keys/ }).isChecked()).resolves.toBe(false);
    await create.getByRole('checkbox', { name: /^keys/ }).check();
    await create.getByRole('button', { name: 'Create key' }).click();
    secret = (await page.getByLabel('New API key').textContent()) as string;
    await page.getByRole('button', { name: 'Done' }).click();
    expect((await price(secret)).status).toBe(200);

    await keyRow(page, 'bot').getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('form', { name: 'Edit bot' });
    await expect(edit.getByLabel('Name').inputValue()).resolves.toBe('bot');
    await expect(edit.getByLabel('Requests per day').inputValue()).resolves.toBe('500');
    await expect(edit.getByRole('checkbox', { name: 'markets' }).isChecked()).resolves.toBe(true);

    // Unchanged: nothing is sent.
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit.getByText('Nothing changed.').waitFor();

    await edit.getByLabel('Name').fill('bot (eu)');
    await edit.getByRole('checkbox', { name: 'markets' }).uncheck();
    await edit.getByLabel('Allowed IPs or CIDR ranges').fill('203.0.113.0/24');
    await edit.getByLabel('Requests per day').fill('');
    await edit.getByLabel('Spend per month (USD)').fill('25');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await page
      .getByRole('table', { name: 'API keys' })
      .getByRole('cell', { name: 'bot (eu)', exact: true })
      .waitFor();
    expect(await page.getByRole('form', { name: /^Edit / }).count()).toBe(0);
    await page.getByText('Saved “bot (eu)”: the change applies at once.').waitFor();
  });

  it('the change holds at the API at once: this machine’s address is now refused', async () => {
    const refused = await price(secret);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { code: string }).code).toBe('IP_NOT_ALLOWED');
    const [row] = await stage.ctx.database.db.query<{ permissions: string[]; allowed_ips: string[] }>(
      'SELECT permissions, allowed_ips FROM api_keys WHERE name = $1',
      ['bot (eu)'],
    );
    expect(row?.permissions).not.toContain('markets');
    expect(row?.allowed_ips).toEqual(['203.0.113.0/24']);
  });

  it('emptying the allow list lifts the restriction; the quotas read back as saved', async () => {
    const { page } = user;
    await keyRow(page, 'bot (eu)').getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('form', { name: 'Edit bot (eu)' });
    await expect(edit.getByLabel('Allowed IPs or CIDR ranges').inputValue()).resolves.toBe('203.0.113.0/24');
    await expect(edit.getByLabel('Spend per month (USD)').inputValue()).resolves.toBe('25.00');
    await edit.getByLabel('Allowed IPs or CIDR ranges').fill('');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    // Saved: the editor closes (the row's Edit button was there all along, so it proves nothing).
    await edit.waitFor({ state: 'detached' });
    expect(await page.getByRole('form', { name: /^Edit / }).count()).toBe(0);
    expect((await price(secret)).status).toBe(200);
    const view = await keyNamed(secret, 'bot (eu)');
    expect(view).toMatchObject({
      allowedIps: [],
      ipRestrictionEnabled: false,
      quotas: { dailyRequests: null, monthlySpendUsd: '25.00' },
    });
    expect(view.permissions).not.toContain('markets');
  });

  it('a refused change shows the API’s message and keeps the editor open', async () => {
    const { page } = user;
    await keyRow(page, 'bot (eu)').getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('form', { name: 'Edit bot (eu)' });
    await edit.getByLabel('Allowed IPs or CIDR ranges').fill('10.0.0.1/8');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit
      .getByText(/host bits|allowedIps/)
      .first()
      .waitFor();
    expect((await price(secret)).status).toBe(200);
  });
});
