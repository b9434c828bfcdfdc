import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { createContext } from '../../src/context.js';
import { fixedDepositPrices } from '../../src/deposits/prices.js';
import { silentLog } from '../../src/logger.js';
import { clearSecretBox } from '../../src/webhooks/secret-box.js';
import type { WebhookTransport } from '../../src/webhooks/transport-port.js';
import { createWorker, type Worker } from '../../src/worker/worker.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { type HttpsReceiver, loopbackTransport, startHttpsReceiver } from '../helpers/https-receiver.js';
import { balanceOf, expectLedgerReconciles } from '../helpers/ledger.js';
import * as cases from '../helpers/solana/cases.js';
import { FakeSolanaRpc } from '../helpers/solana/rpc-server.js';
import { DepositWorld } from '../helpers/solana/world.js';

/**
 * The account events' promise end to end (docs/webhooks.md#account-events): a builder registers an
 * endpoint through the API for `deposit.credited` and `balance.low`; a real USDC transfer from the
 * account's wallet, executed by the real token program (LiteSVM) and served by the local JSON-RPC
 * server, is credited by the worker's deposit watcher and the receiver — a real HTTPS server — gets
 * `deposit.credited`; billed API requests then spend the balance below the live account's default
 * threshold (5.00) and the receiver gets `balance.low` exactly once, nothing more for the spending
 * after it. The worker is the service's own (`createWorker`, started: its periodic tasks and
 * delivery queue run on their own), and every request received is verified with the Standard
 * Webhooks reference library, not with Sibyl's verifier.
 */

let ctx: TestContext;
let world: DepositWorld;
let rpc: FakeSolanaRpc;
let receiver: HttpsReceiver;
let transport: WebhookTransport & { close(): Promise<void> };
let worker: Worker;

beforeAll(async () => {
  world = await DepositWorld.create();
  await world.openAta(world.treasury, world.treasury.address);
  rpc = await FakeSolanaRpc.start();
  receiver = await startHttpsReceiver();
  transport = await loopbackTransport();
  ctx = await createTestContext({
    config: {
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      SOLANA_RPC_URL: rpc.url,
      DEPOSIT_ADDRESS: world.treasury.address,
      DEPOSIT_POLL_MS: '500',
    },
    app: { webhookTransport: transport },
  });
  worker = await createWorker({
    config: ctx.config,
    db: ctx.database.db,
    clock: ctx.clock,
    log: silentLog,
    webhookTransport: transport,
    liveVenues: [],
    candleVenues: [],
    deposits: { prices: fixedDepositPrices({ SOL: 150, USDC: 1 }) },
  });
  await worker.start();
});

afterAll(async () => {
  await worker?.stop();
  await ctx?.close();
  await transport?.close();
  await receiver?.close();
  await rpc?.close();
});

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('account events end to end', () => {
  it('a registered endpoint gets deposit.credited for a deposit from the chain, then balance.low once as billed requests spend it', async () => {
    const db = ctx.database.db;
    // The builder: a live account signed up with its wallet, and a key.
    const wallet = await world.user(6_000_000n);
    const account = await createAccount(
      createContext(db, ctx.clock),
      { mode: 'live', walletAddress: wallet.address },
      clearSecretBox,
    );
    const { key } = await ctx.addKey(account.id);

    const registered = await ctx.request(key, {
      method: 'POST',
      url: '/api/v1/webhooks/endpoints',
      payload: { url: `${receiver.url}/sibyl`, eventTypes: ['deposit.credited', 'balance.low'] },
    });
    expect(registered.statusCode, registered.body).toBe(200);
    const { id: endpointId, secret } = registered.json() as { id: string; secret: string };
    const alerts = await ctx.request(key, { method: 'GET', url: '/api/v1/account/alerts' });
    expect(alerts.json()).toMatchObject({ lowBalanceUsd: ['5.00'] });

    /** Every request the receiver got, verified by the reference library, in arrival order. */
    const received = () =>
      receiver.received.map((request) => {
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
        [account.id],
      );
      return open.length === 0;
    };

    // 6.00 USDC from the account's wallet to the treasury, on the chain.
    const deposit = await cases.usdcCheckedDeposit(world, 6_000_000n, wallet);
    rpc.publish(deposit.tx);
    await until(async () => receiver.received.length >= 1, 'deposit.credited at the receiver');
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
    expect(await balanceOf(db, account.id)).toBe(6_000_000n);

    // Billed requests (the markets list, 0.05 each): the 21st takes the balance from 5.00 to 4.95.
    const list = () => ctx.request(key, { method: 'GET', url: '/api/v1/markets' });
    for (let i = 0; i < 20; i++) expect((await list()).statusCode).toBe(200);
    expect(await balanceOf(db, account.id)).toBe(5_000_000n);
    expect((await list()).statusCode).toBe(200);
    await until(async () => receiver.received.length >= 2, 'balance.low at the receiver');
    // More spending below the threshold: nothing more is sent.
    for (let i = 0; i < 10; i++) expect((await list()).statusCode).toBe(200);
    expect(await balanceOf(db, account.id)).toBe(4_450_000n);
    await until(settled, 'every alert recorded and every delivery finished');
    const payloads = received();
    expect(payloads.map((p) => p.type)).toEqual(['deposit.credited', 'balance.low']);
    expect(payloads[1]?.data).toEqual({ thresholdUsd: '5.00', balanceUsd: '4.95', accountId: account.id });
    expect(receiver.received).toHaveLength(2);
    const deliveries = await db.query<{ type: string; status: string; attempts: number }>(
      'SELECT type, status, attempts FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY type',
      [endpointId],
    );
    expect(deliveries).toEqual([
      { type: 'balance.low', status: 'DELIVERED', attempts: 1 },
      { type: 'deposit.credited', status: 'DELIVERED', attempts: 1 },
    ]);
    await expectLedgerReconciles(db);
  });
});
