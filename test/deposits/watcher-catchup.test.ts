import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { createContext } from '../../src/context.js';
import { fixedDepositPrices } from '../../src/deposits/prices.js';
import { createSolanaRpcClient } from '../../src/deposits/rpc-client.js';
import { type Treasury, treasuryOf } from '../../src/deposits/treasury.js';
import { createDepositWatcher } from '../../src/deposits/watcher.js';
import { getBalance } from '../../src/ledger/ledger.js';
import { systemClock } from '../../src/lib/clock.js';
import { silentLog } from '../../src/logger.js';
import { PeriodicRunner } from '../../src/queue/periodic.js';
import { clearSecretBox } from '../../src/webhooks/secret-box.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { expectLedgerReconciles } from '../helpers/ledger.js';
import { transferChecked } from '../helpers/solana/cases.js';
import type { ExecutedTransaction } from '../helpers/solana/chain.js';
import { FakeSolanaRpc } from '../helpers/solana/rpc-server.js';
import { DepositWorld, USDC_MINT } from '../helpers/solana/world.js';

/**
 * The watcher catching up a history into a real database, then keeping up with one deposit a
 * second. DEPOSIT_BENCH_N and DEPOSIT_BENCH_LAG_SAMPLES make it the measurement of
 * bench/deposits.js (printed, never asserted: no timing assertions here); the suite runs it small.
 */
const N = Number(process.env.DEPOSIT_BENCH_N ?? 120);
const LAG_SAMPLES = Number(process.env.DEPOSIT_BENCH_LAG_SAMPLES ?? 2);
const POLL_MS = Number(process.env.DEPOSIT_BENCH_POLL_MS ?? 1000);
const SENDERS = 10;

let database: TestDatabase;
let world: DepositWorld;
let rpc: FakeSolanaRpc;
let treasury: Treasury;
let history: ExecutedTransaction[];
let live: ExecutedTransaction[];
const accounts: string[] = [];

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

beforeAll(async () => {
  database = await createTestDatabase();
  world = await DepositWorld.create();
  rpc = await FakeSolanaRpc.start();
  const senders: Awaited<ReturnType<typeof world.user>>[] = [];
  for (let i = 0; i < SENDERS; i++) {
    const sender = await world.user(10n ** 12n);
    senders.push(sender);
    const account = await createAccount(
      createContext(database.db, systemClock),
      { mode: 'live', walletAddress: sender.address },
      clearSecretBox,
    );
    accounts.push(account.id);
  }
  rpc.publish(await world.openAta(senders[0] as (typeof senders)[number], world.treasury.address));
  const treasuryUsdc = await world.treasuryUsdc();
  const build = async (i: number) => {
    const s = senders[i % SENDERS] as (typeof senders)[number];
    const instruction =
      i % 2 === 0
        ? world.solTransfer(s, world.treasury.address, 10_000_000n + BigInt(i))
        : await transferChecked(world, s, treasuryUsdc, 1_000_000n + BigInt(i));
    return world.chain.send(s, [instruction]);
  };
  const started = performance.now();
  history = [];
  for (let i = 0; i < N; i++) {
    const tx = await build(i);
    history.push(tx);
    rpc.publish(tx);
  }
  live = [];
  for (let i = 0; i < LAG_SAMPLES; i++) live.push(await build(N + i));
  console.info(
    `built ${N + LAG_SAMPLES} deposit transactions in ${Math.round(performance.now() - started)} ms`,
  );
  treasury = await treasuryOf(world.treasury.address, USDC_MINT);
}, 1_200_000);

afterAll(async () => {
  await rpc.close();
  await database.close();
});

function watcher() {
  return createDepositWatcher({
    db: database.db,
    clock: systemClock,
    log: silentLog,
    rpc: createSolanaRpcClient({ url: rpc.url, timeoutMs: 60_000, maxAttempts: 3, batchSize: 100 }),
    treasury,
    prices: fixedDepositPrices({ SOL: 150, USDC: 1 }),
    settings: { pollMs: POLL_MS, minUsdMicros: 1_000_000n },
    holder: 'bench',
  });
}

async function totalBalance(): Promise<bigint> {
  let sum = 0n;
  for (const id of accounts) sum += await getBalance(createContext(database.db, systemClock), id);
  return sum;
}

describe('the watcher catching up, then keeping up', () => {
  it('credits a history of deposits once each', async () => {
    const cpu = process.cpuUsage();
    const started = performance.now();
    const report = await watcher().poll();
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    console.info(
      `catch-up: ${N} deposits credited in ${seconds.toFixed(2)} s = ${Math.round(N / seconds)} deposits/s; ` +
        `CPU ${((used.user + used.system) / 1000 / N).toFixed(2)} ms per deposit ` +
        '(this process: watcher, PGlite or the pg client, and the fake RPC)',
    );
    expect(report?.written.credited).toBe(N);
    const [row] = await database.db.query<{ n: bigint | number }>(
      `SELECT count(DISTINCT reference) AS n FROM ledger_entries WHERE kind = 'deposit'`,
    );
    expect(Number(row?.n)).toBe(N);
    await expectLedgerReconciles(database.db);
  }, 1_200_000);

  it.runIf(LAG_SAMPLES > 0)(
    'keeps up with one deposit a second (lag from finalization to the credit)',
    async () => {
      const runner = new PeriodicRunner([watcher().task], { clock: systemClock, log: silentLog });
      runner.start();
      const lags: number[] = [];
      try {
        for (const tx of live) {
          const before = await totalBalance();
          const publishedAt = performance.now();
          rpc.publish(tx); // finalized as it is published
          while ((await totalBalance()) === before) await new Promise((r) => setTimeout(r, 10));
          lags.push(performance.now() - publishedAt);
          const wait = 1000 - (performance.now() - publishedAt);
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        }
      } finally {
        await runner.stop();
      }
      const sorted = [...lags].sort((a, b) => a - b);
      console.info(
        `lag at 1 deposit/s, poll ${POLL_MS} ms, ${lags.length} samples: ` +
          `p50 ${Math.round(percentile(sorted, 50))} ms, p99 ${Math.round(percentile(sorted, 99))} ms, max ${Math.round(sorted.at(-1) as number)} ms`,
      );
      expect(lags).toHaveLength(LAG_SAMPLES);
    },
    1_200_000,
  );
});
