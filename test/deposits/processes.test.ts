import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { createContext } from '../../src/context.js';
import { clearSecretBox } from '../../src/webhooks/secret-box.js';
import { runCli } from '../helpers/cli.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { usingPostgres } from '../helpers/db.js';
import { type FakeServer, startFakeServer } from '../helpers/fake-server.js';
import { balanceOf, expectLedgerReconciles } from '../helpers/ledger.js';
import { type ServiceProcess, startService } from '../helpers/process.js';
import * as cases from '../helpers/solana/cases.js';
import { FakeSolanaRpc } from '../helpers/solana/rpc-server.js';
import { DepositWorld } from '../helpers/solana/world.js';

/**
 * The deposit watcher in real worker processes on one PostgreSQL database, killed with SIGKILL
 * while it credits, again and again, with new deposits arriving between the kills: in the end every
 * deposit is credited exactly once and `sibyl ledger reconcile` is exact. (PostgreSQL only.)
 */

let ctx: TestContext;
let rpc: FakeSolanaRpc;
let venue: FakeServer;
const workers: ServiceProcess[] = [];

beforeAll(async () => {
  if (!usingPostgres) return;
  ctx = await createTestContext();
  rpc = await FakeSolanaRpc.start();
  // One price venue (Binance's shape): SOL at 150 and USDC at 1, live and in 1-minute candles.
  venue = await startFakeServer((request) => {
    const url = request.url;
    const symbol = url.searchParams.get('symbol') ?? '';
    const price = symbol.startsWith('SOL') ? '150' : '1';
    if (url.pathname === '/api/v3/klines') {
      const open = Number(url.searchParams.get('startTime'));
      return {
        body: [[open, price, price, price, price, '1000', open + 59_999, '1000000', 10, '500', '500', '0']],
      };
    }
    return { body: { symbol, lastPrice: price, quoteVolume: '250000000.00', closeTime: Date.now() } };
  });
});

afterAll(async () => {
  for (const worker of workers) await worker.kill();
  if (!usingPostgres) return;
  await rpc.close();
  await venue.close();
  await ctx.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.runIf(usingPostgres)('the deposit watcher across worker processes (PostgreSQL)', () => {
  it('killed with SIGKILL mid-credit, repeatedly: every deposit credited exactly once, the ledger exact', async () => {
    const db = ctx.database.db;
    const world = await DepositWorld.create();
    await world.openAta(world.treasury, world.treasury.address);
    const senders = [await world.user(), await world.user(), await world.user()];
    const accounts: Awaited<ReturnType<typeof createAccount>>[] = [];
    for (const sender of senders) {
      accounts.push(
        await createAccount(
          createContext(db, ctx.clock),
          { mode: 'live', walletAddress: sender.address },
          clearSecretBox,
        ),
      );
    }
    const env = {
      DATABASE_URL: ctx.database.location,
      DB_POOL_SIZE: '4',
      SOLANA_RPC_URL: rpc.url,
      DEPOSIT_ADDRESS: world.treasury.address,
      DEPOSIT_POLL_MS: '500',
      SOLANA_RPC_BATCH_SIZE: '7',
      PRICE_VENUES: 'binance',
      BINANCE_BASE_URL: venue.url,
      PRICE_MIN_SOURCES: '1',
    };
    const references: string[] = [];
    const expected = new Map<string, bigint>();
    let n = 0;
    const publish = async (count: number) => {
      for (let i = 0; i < count; i++, n++) {
        const k = n % 3;
        const sender = senders[k] as (typeof senders)[number];
        // 0.01 SOL (1.50 USD) plus n lamports' worth, so every deposit has its own amount.
        const c = await cases.solDeposit(world, 10_000_000n + BigInt(n) * 10_000n, sender);
        rpc.publish(c.tx);
        references.push(`sol:${c.tx.signature}:0`);
        const id = (accounts[k] as Awaited<ReturnType<typeof createAccount>>).id;
        expected.set(id, (expected.get(id) ?? 0n) + 1_500_000n + BigInt(n) * 1_500n);
      }
    };

    for (let round = 0; round < 6; round++) {
      await publish(40);
      const worker = await startService('work', env, async () => true);
      workers.push(worker);
      // Somewhere inside its polls: start-up, a lease still held by the killed one, a chunk being written.
      await sleep(1500 + ((round * 700) % 2500));
      await worker.kill();
    }
    await publish(10);
    const last = await startService('work', env, async () => true);
    workers.push(last);
    const deadline = Date.now() + 120_000;
    for (;;) {
      const [row] = await db.query<{ n: bigint | number }>(
        `SELECT count(*) AS n FROM deposits WHERE status = 'credited'`,
      );
      if (Number(row?.n) === references.length || Date.now() > deadline) break;
      await sleep(200);
    }
    await last.kill();

    const entries = await db.query<{ reference: string; n: bigint | number }>(
      `SELECT reference, count(*) AS n FROM ledger_entries WHERE kind = 'deposit' GROUP BY reference`,
    );
    expect(entries.length).toBe(references.length);
    expect(entries.filter((e) => Number(e.n) !== 1)).toEqual([]);
    expect(new Set(entries.map((e) => e.reference))).toEqual(new Set(references));
    for (const account of accounts) expect(await balanceOf(db, account.id)).toBe(expected.get(account.id));
    await expectLedgerReconciles(db);
    const reconcile = runCli(['ledger', 'reconcile', '--json'], { DATABASE_URL: ctx.database.location });
    expect(reconcile.status, reconcile.stdout + reconcile.stderr).toBe(0);
  });
});
