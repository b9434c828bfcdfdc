import type { KeyPairSigner } from '@solana/kit';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedDepositPrices } from '../../src/deposits/prices.js';
import { createSolanaRpcClient } from '../../src/deposits/rpc-client.js';
import { treasuryOf } from '../../src/deposits/treasury.js';
import { createDepositWatcher, type DepositWatcher } from '../../src/deposits/watcher.js';
import { silentLog } from '../../src/logger.js';
import { installWallet, newContext } from '../helpers/browser.js';
import { openPage, type Stage, startStage, switchMode } from '../helpers/dashboard-stage.js';
import { balanceOf, expectLedgerReconciles } from '../helpers/ledger.js';
import * as cases from '../helpers/solana/cases.js';
import { FakeSolanaRpc } from '../helpers/solana/rpc-server.js';
import { DepositWorld, USDC_MINT } from '../helpers/solana/world.js';
import { TestWallet } from '../helpers/wallet.js';

/**
 * The funds page in a real browser with the deposit watcher running (docs/dashboard.md#your-wallets): a second wallet
 * in the page is linked by signing with it, a real transfer from it (executed in LiteSVM, served by
 * the fake JSON-RPC) is credited to the account; a deposit seen at `confirmed` shows as pending,
 * then credited once `finalized`, the balance moving once.
 */

const LAMPORTS_PER_SOL = 1_000_000_000n;

let stage: Stage;
let world: DepositWorld;
let rpc: FakeSolanaRpc;
let watcher: DepositWatcher;
let page: Page;
let liveAccountId: string;
const signInWallet = new TestWallet();
const secondWallet = new TestWallet();

/** The same wallet as a Solana signer in the local chain, with SOL to send. */
async function onChain(wallet: TestWallet): Promise<KeyPairSigner> {
  const signer = await world.walletOf(wallet.seed());
  expect(signer.address).toBe(wallet.address);
  return signer;
}

beforeAll(async () => {
  world = await DepositWorld.create();
  rpc = await FakeSolanaRpc.start();
  stage = await startStage({
    config: { DEPOSIT_ADDRESS: world.treasury.address, SOLANA_RPC_URL: rpc.url },
  });
  watcher = createDepositWatcher({
    db: stage.ctx.database.db,
    clock: stage.ctx.clock,
    log: silentLog,
    rpc: createSolanaRpcClient({ url: rpc.url, timeoutMs: 10_000, maxAttempts: 3, batchSize: 4 }),
    treasury: await treasuryOf(world.treasury.address, USDC_MINT),
    prices: fixedDepositPrices({ SOL: 150, USDC: 1.0 }),
    settings: { pollMs: 1000, minUsdMicros: 1_000_000n },
    pageSize: 1000,
    chunkSize: 100,
    holder: 'browser-test',
  });
});
afterAll(async () => {
  await stage?.close();
  await rpc?.close();
});

const header = () => page.getByRole('navigation', { name: 'Account' });
const depositRow = (signature: string) =>
  page.getByRole('table').filter({ hasText: 'Reference' }).locator('tr', { hasText: signature });

describe('your wallets', () => {
  it('links a second wallet of the page by signing with it; a deposit from it is credited', async () => {
    const context = await newContext(stage.browser);
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
    await installWallet(page, signInWallet, 'signIn');
    await installWallet(page, secondWallet, 'signMessage', 'Second Wallet');
    await page.goto(`${stage.base}/dashboard/`);
    await page.getByRole('button', { name: 'Sign in with Test Wallet' }).click();
    await page.getByText('Spend today').waitFor();
    const [account] = await stage.ctx.database.db.query<{ id: string }>(
      'SELECT id FROM accounts WHERE wallet_address = $1',
      [signInWallet.address],
    );
    liveAccountId = account?.id as string;

    // A first sign-in lands in the sandbox; the wallets are the live account's.
    await switchMode(page, 'Live');
    await openPage(page, 'Add funds');
    const wallets = page.getByRole('table', { name: 'Your wallets' });
    await wallets.locator('tr', { hasText: signInWallet.address }).getByText('sign-in wallet').waitFor();
    await page.getByText('an exchange comes from the exchange', { exact: false }).waitFor();
    await page.getByRole('button', { name: 'Link another wallet' }).click();
    await page.getByRole('button', { name: 'Link with Second Wallet' }).click();
    await page.getByRole('status').getByText(`Linked ${secondWallet.address}.`).waitFor();
    await wallets
      .locator('tr', { hasText: secondWallet.address })
      .getByText('linked', { exact: true })
      .waitFor();
    const links = await stage.ctx.database.db.query(
      'SELECT account_id FROM deposit_wallets WHERE address = $1',
      [secondWallet.address],
    );
    expect(links).toEqual([{ account_id: liveAccountId }]);

    // A real SOL transfer signed by the linked wallet's key, finalized on the fake RPC.
    const deposit = await cases.solDeposit(world, LAMPORTS_PER_SOL / 10n, await onChain(secondWallet));
    rpc.publish(deposit.tx);
    expect((await watcher.poll())?.written.credited).toBe(1);
    expect(await balanceOf(stage.ctx.database.db, liveAccountId)).toBe(15_000_000n);
    await page.reload();
    await page.getByRole('heading', { level: 1, name: /^Add funds/ }).waitFor();
    const row = depositRow(deposit.tx.signature);
    await row.getByRole('cell', { name: 'credited', exact: true }).waitFor();
    await expect(row.textContent()).resolves.toContain('0.1 SOL');
    await expect(row.textContent()).resolves.toContain('$15.00');
    await header().getByText('Live · $15.00').waitFor();
  });

  it('a deposit confirmed shows as pending, then credited once finalized; the balance moves once', async () => {
    const deposit = await cases.solDeposit(world, LAMPORTS_PER_SOL / 5n, await onChain(signInWallet));
    rpc.publish(deposit.tx, { finalized: false });
    expect((await watcher.poll())?.pending).toBe(1);
    await page.reload();
    const row = depositRow(deposit.tx.signature);
    await row.getByRole('cell', { name: 'pending', exact: true }).waitFor();
    await expect(row.textContent()).resolves.toContain('0.2 SOL');
    await header().getByText('Live · $15.00').waitFor();
    expect(await balanceOf(stage.ctx.database.db, liveAccountId)).toBe(15_000_000n);

    // Finalized: the next poll credits it; the page, looking again while a deposit is pending,
    // shows it credited and the header the new balance, without a reload.
    rpc.ledger.finalizeThrough(deposit.tx.slot);
    expect((await watcher.poll())?.written.credited).toBe(1);
    await row.getByRole('cell', { name: 'credited', exact: true }).waitFor();
    await expect(row.textContent()).resolves.toContain('$30.00');
    await header().getByText('Live · $45.00').waitFor();
    // Polled again: nothing moves twice.
    await watcher.poll();
    expect(await balanceOf(stage.ctx.database.db, liveAccountId)).toBe(45_000_000n);
    const entries = await stage.ctx.database.db.query(
      `SELECT id FROM ledger_entries WHERE kind = 'deposit' AND reference = $1`,
      [`sol:${deposit.tx.signature}:0`],
    );
    expect(entries).toHaveLength(1);
    await expectLedgerReconciles(stage.ctx.database.db);
  });

  it('unlinks the second wallet', async () => {
    const wallets = page.getByRole('table', { name: 'Your wallets' });
    await page.getByRole('button', { name: `Unlink ${secondWallet.address}` }).click();
    await wallets.locator('tr', { hasText: secondWallet.address }).waitFor({ state: 'detached' });
    const links = await stage.ctx.database.db.query('SELECT 1 FROM deposit_wallets WHERE address = $1', [
      secondWallet.address,
    ]);
    expect(links).toEqual([]);
    await page.context().close();
  });
});
