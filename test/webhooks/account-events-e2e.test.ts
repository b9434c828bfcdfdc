import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { fixedDepositPrices } from '../../src/deposits/prices.js';
import { silentLog } from '../../src/logger.js';
import { createWorker, type Worker } from '../../src/worker/worker.js';
import {
  openPage,
  openWebhooksTab,
  type Stage,
  signedInPage,
  startStage,
  switchMode,
} from '../helpers/dashboard-stage.js';
import { balanceOf, expectLedgerReconciles } from '../helpers/ledger.js';
import * as cases from '../helpers/solana/cases.js';
import { FakeSolanaRpc } from '../helpers/solana/rpc-server.js';
import { DepositWorld } from '../helpers/solana/world.js';

/**
 * The account events' promise end to end (docs/webhooks.md#account-events), as a builder lives it:
 * signed in to the dashboard with a wallet in a real browser, they make a live key on the Keys page,
 * register one endpoint on the Webhooks tab — a real HTTPS receiver on loopback — for
 * `deposit.credited` and `balance.low`, copy its secret from the page (shown once) and set a
 * low-balance threshold there. A real USDC transfer from the same wallet, executed by the real token
 * program (LiteSVM) and served by the local JSON-RPC server, is credited by the worker's deposit
 * watcher and the receiver gets `deposit.credited`; billed API requests with the key then spend the
 * balance below the threshold and the receiver gets `balance.low` exactly once, nothing more for the
 * spending after it. The worker is the service's own (`createWorker`, started: its deposit watcher,
 * periodic tasks and delivery queue run on their own), and every request received is verified with
 * the Standard Webhooks reference library and the secret the page showed, not with Sibyl's verifier.
 */

let stage: Stage;
let world: DepositWorld;
let rpc: FakeSolanaRpc;
let worker: Worker;

beforeAll(async () => {
  world = await DepositWorld.create();
  await world.openAta(world.treasury, world.treasury.address);
  rpc = await FakeSolanaRpc.start();
  stage = await startStage({
    config: { SOLANA_RPC_URL: rpc.url, DEPOSIT_ADDRESS: world.treasury.address, DEPOSIT_POLL_MS: '500' },
  });
  worker = await createWorker({
    config: stage.ctx.config,
    db: stage.ctx.database.db,
    clock: stage.ctx.clock,
    log: silentLog,
    webhookTransport: stage.transport,
    liveVenues: [],
    candleVenues: [],
    deposits: { prices: fixedDepositPrices({ SOL: 150, USDC: 1 }) },
  });
  await worker.start();
});

afterAll(async () => {
  await worker?.stop();
  await stage?.close();
  await rpc?.close();
});

/** Waits, without a fixed sleep, until `condition` holds (far above any local round trip). */
const until = (condition: () => Promise<boolean> | boolean, what: string) =>
  vi.waitFor(
    async () => {
      if (!(await condition())) throw new Error(`still waiting for ${what}`);
    },
    { timeout: 60_000, interval: 50 },
  );

describe('account events end to end, from the dashboard', () => {
  it('an endpoint registered in the dashboard gets deposit.credited for a deposit from the chain, then balance.low once as billed requests spend it', async () => {
    const { db } = stage.ctx.database;
    const { page, wallet, context } = await signedInPage(stage);
    await switchMode(page, 'Live');
    const [account] = await db.query<{ id: string }>(
      `SELECT id FROM accounts WHERE wallet_address = $1 AND mode = 'live'`,
      [wallet.address],
    );
    const accountId = account?.id as string;
    expect(accountId).toBeDefined();

    // A live key, made on the Keys page (the data permissions a new key has).
    await openPage(page, 'Keys');
    const create = page.getByRole('form', { name: 'Create a key' });
    await create.getByLabel('Name').fill('trading bot');
    await create.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.getByLabel('New API key').textContent()) as string;
    await page.getByRole('button', { name: 'Done' }).click();

    // One endpoint, for the two events, its secret copied from the page that shows it once.
    await openWebhooksTab(page);
    const url = `${stage.receiver.url}/sibyl`;
    await page.getByLabel('Endpoint URL').fill(url);
    await page.getByLabel('All, present and future').uncheck();
    await page.getByLabel('deposit.credited').check();
    await page.getByLabel('balance.low').check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = (await page.getByLabel('Endpoint signing secret').textContent()) as string;
    expect(secret).toMatch(/^whsec_/);
    await page.getByText('you will not see it again').waitFor();
    await page.getByRole('button', { name: 'Done', exact: true }).click();
    const row = page
      .getByRole('table', { name: 'Webhook endpoints' })
      .getByRole('row')
      .filter({ hasText: url });
    await expect(row.textContent()).resolves.toMatch(
      /deposit\.credited.*balance\.low|balance\.low.*deposit\.credited/,
    );

    // The threshold: a live account starts with 5.00; the builder wants to hear at 5.50 instead.
    await expect(page.getByLabel('Threshold 1 (USD)').inputValue()).resolves.toBe('5.00');
    await page.getByLabel('Threshold 1 (USD)').fill('5.5');
    await page.getByRole('button', { name: 'Save alerts' }).click();
    await page.getByText('Alerts below $5.50.').waitFor();

    const endpoints = await db.query<{ id: string }>(
      'SELECT id FROM webhook_endpoints WHERE account_id = $1',
      [accountId],
    );
    expect(endpoints).toHaveLength(1);
    const endpointId = endpoints[0]?.id;

    /** Every request the receiver got, verified by the reference library, in arrival order. */
    const received = () =>
      stage.receiver.received.map((request) => {
        expect(request.url).toBe('/sibyl');
        const headers = request.headers as Record<string, string>;
        const payload = new Webhook(secret).verify(request.body, headers) as {
          id: string;
          type: string;
          data: Record<string, unknown>;
        };
        expect(headers['webhook-id']).toBe(`${payload.id}_${endpointId}`);
        return payload;
      });
    const settled = async () => {
      const open = await db.query(
        `SELECT 1 FROM webhook_deliveries WHERE account_id = $1 AND status IN ('PENDING', 'SENDING')
         UNION ALL SELECT 1 FROM balance_alerts WHERE account_id = $1 AND emitted_at IS NULL`,
        [accountId],
      );
      return open.length === 0;
    };

    // 6.00 USDC from the wallet the builder signed in with, to the treasury, on the chain.
    const onChain = await world.walletOf(wallet.seed(), 6_000_000n);
    expect(onChain.address).toBe(wallet.address);
    const deposit = await cases.usdcCheckedDeposit(world, 6_000_000n, onChain);
    rpc.publish(deposit.tx);
    await until(() => stage.receiver.received.length >= 1, 'deposit.credited at the receiver');
    const reference = `sol:${deposit.tx.signature}:0`;
    expect(received()).toEqual([
      {
        id: expect.stringMatching(/^evt_[1-9A-HJ-NP-Za-km-z]{24}$/),
        type: 'deposit.credited',
        createdAt: expect.any(String),
        mode: 'live',
        data: {
          id: reference,
          status: 'credited',
          token: 'USDC',
          amount: '6',
          usdValue: '6.00',
          rateUsd: '1',
          signature: deposit.tx.signature,
          slot: deposit.tx.slot,
          reference,
          memo: null,
          createdAt: expect.any(String),
          balanceUsd: '6.00',
        },
      },
    ]);
    expect(await balanceOf(db, accountId)).toBe(6_000_000n);

    // Billed requests with the key (the markets list, 0.05 each): the 11th takes 5.50 to 5.45.
    const list = () => fetch(`${stage.base}/api/v1/markets`, { headers: { authorization: `Bearer ${key}` } });
    for (let i = 0; i < 10; i++) expect((await list()).status).toBe(200);
    expect(await balanceOf(db, accountId)).toBe(5_500_000n);
    expect((await list()).status).toBe(200);
    await until(() => stage.receiver.received.length >= 2, 'balance.low at the receiver');
    // More spending below the threshold (past the 5.00 it replaced, too): nothing more is sent.
    for (let i = 0; i < 10; i++) expect((await list()).status).toBe(200);
    expect(await balanceOf(db, accountId)).toBe(4_950_000n);
    await until(settled, 'every alert recorded and every delivery finished');
    const payloads = received();
    expect(payloads.map((p) => p.type)).toEqual(['deposit.credited', 'balance.low']);
    expect(payloads[1]?.data).toEqual({ thresholdUsd: '5.50', balanceUsd: '5.45', accountId });
    expect(stage.receiver.received).toHaveLength(2);
    // Each is one delivery to the endpoint, sent once, and the page lists both.
    const deliveries = await db.query<{ type: string; status: string; attempts: number }>(
      'SELECT type, status, attempts FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY type',
      [endpointId],
    );
    expect(deliveries).toEqual([
      { type: 'balance.low', status: 'DELIVERED', attempts: 1 },
      { type: 'deposit.credited', status: 'DELIVERED', attempts: 1 },
    ]);
    await page.reload();
    await openWebhooksTab(page);
    const listed = page.getByRole('table', { name: 'Webhook deliveries' });
    await listed.getByRole('row').filter({ hasText: 'balance.low' }).waitFor();
    await listed.getByRole('row').filter({ hasText: 'deposit.credited' }).waitFor();
    await expectLedgerReconciles(db);
    await context.close();
  });
});
