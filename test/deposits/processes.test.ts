import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { createContext } from '../../src/context.js';
import type { Queryable } from '../../src/db/database.js';
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
 * mid-credit, again and again, with new deposits arriving between the kills: in the end every
 * deposit is credited exactly once and `sibyl ledger reconcile` is exact. (PostgreSQL only.)
 *
 * The kills are tied to the work, not to a clock, and production code has no hook for them. Three
 * ways, in turn: (a) the fake RPC tells the test the moment it has answered the worker's read of a
 * chunk of finalized transactions holding deposits not credited yet, and the test kills the worker
 * right then — it has the chunk in hand, its credit not yet committed; (b) the test holds the
 * accounts' rows locked, so the ledger's credit statement waits inside the worker's open
 * transaction (seen in pg_stat_activity), and kills it there; (c) the test holds an uncommitted row
 * of the chunk, so the ledger has credited the chunk and the rows' statement waits, and kills it
 * there. After each kill the test checks that none of that chunk's deposits became final or has a
 * ledger entry: the kill did land mid-credit, and the credit went with it.
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

async function until(what: string, check: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

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
      // A chunk (100 signatures) is read in one JSON-RPC batch: one answer, then its credit.
      SOLANA_RPC_BATCH_SIZE: '100',
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
    const finalSignatures = async () =>
      new Set(
        (
          await db.query<{ signature: string }>(`SELECT signature FROM deposits WHERE status <> 'pending'`)
        ).map((r) => r.signature),
      );
    /**
     * Resolves with the signatures of the `skip`+1-th finalized chunk read holding a deposit not final
     * yet (those deposits), calling `then` as soon as its answer has left the fake RPC.
     */
    const chunkRead = (open: Set<string>, skip: number, then: () => void) =>
      new Promise<string[]>((resolve) => {
        let seen = 0;
        rpc.onAnswered = (calls) => {
          const fresh = calls
            .filter(
              (c) =>
                c.method === 'getTransaction' &&
                (c.params[1] as { commitment?: string } | undefined)?.commitment === 'finalized' &&
                open.has(c.params[0] as string),
            )
            .map((c) => c.params[0] as string);
          if (fresh.length === 0 || seen++ < skip) return;
          rpc.onAnswered = null;
          then();
          resolve(fresh);
        };
      });
    /** After a kill mid-credit: none of the chunk's deposits is final, none has a ledger entry. */
    const noneCredited = async (signatures: string[]) => {
      const final = await finalSignatures();
      expect(signatures.filter((s) => final.has(s))).toEqual([]);
      const [row] = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ledger_entries WHERE reference = ANY($1::text[])`,
        [signatures.map((s) => `sol:${s}:0`)],
      );
      expect(row?.n).toBe(0);
    };
    /**
     * Runs `hold` in a transaction of the test's own, kept open until the worker has been killed while
     * a statement of its credit waits on what `hold` took (`waiting`: a LIKE pattern of that
     * statement's opening; the activity view keeps only a query's first kilobyte). Rolled back.
     */
    const killWhileWaiting = async (
      open: Set<string>,
      hold: (tx: Queryable) => Promise<void>,
      waiting: string,
    ): Promise<string[]> => {
      let release = () => {};
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      let held = () => {};
      let failed: (err: unknown) => void = () => {};
      const isHeld = new Promise<void>((resolve, reject) => {
        held = resolve;
        failed = reject;
      });
      const ROLLBACK = new Error('rolled back');
      const holding = db
        .transaction(async (tx) => {
          await hold(tx);
          held();
          await released;
          throw ROLLBACK;
        })
        .catch((err) => {
          if (err !== ROLLBACK) failed(err);
        });
      await isHeld;
      const read = chunkRead(open, 0, () => {});
      const worker = await startService('work', env, async () => true);
      workers.push(worker);
      const chunk = await read;
      await until(`the worker's statement ${waiting} to wait`, async () => {
        const [row] = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid()
              AND wait_event_type = 'Lock' AND query LIKE $1`,
          [waiting],
        );
        return (row?.n ?? 0) > 0;
      });
      await worker.kill();
      release();
      await holding;
      return chunk;
    };

    for (let round = 0; round < 6; round++) {
      await publish(40);
      const final = await finalSignatures();
      const open = new Set(references.map((r) => r.split(':')[1] as string).filter((s) => !final.has(s)));
      let chunk: string[];
      if (round % 3 === 0) {
        // (a) Killed the moment the fake RPC has answered its read of a chunk to credit. In round 3
        // (more than one chunk open) the first chunk is let through to commit, the second is killed.
        let worker: ServiceProcess | undefined;
        const skip = round === 3 && open.size > 100 ? 1 : 0;
        const read = chunkRead(open, skip, () => worker?.child.kill('SIGKILL'));
        // startService returns before the new process has even loaded its code: armed in time.
        worker = await startService('work', env, async () => true);
        workers.push(worker);
        chunk = await read;
        await worker.kill();
      } else if (round % 3 === 1) {
        // (b) Killed while the ledger's credit statement (ledger_credit_deposits) waits for the
        // accounts' rows, which the test holds, inside the worker's transaction.
        chunk = await killWhileWaiting(
          open,
          async (tx) => {
            await tx.query('SELECT id FROM accounts WHERE id = ANY($1::text[]) FOR UPDATE', [
              accounts.map((a) => a.id),
            ]);
          },
          '%SELECT t.account_id, t.amount, t.reference, t.memo%',
        );
      } else {
        // (c) Killed after the ledger credited the chunk, while the rows' statement
        // (deposits_write_final_batch) waits for a row of the chunk the test has inserted and not
        // committed: the credit is in the same transaction, and goes with it.
        const oldest = references.map((r) => r.split(':')[1] as string).find((s) => open.has(s)) as string;
        chunk = await killWhileWaiting(
          open,
          async (tx) => {
            await tx.query(
              `INSERT INTO deposits (reference, signature, instruction, asset, amount, decimals, slot, status, seen_at)
               VALUES ($1, $2, '0', 'SOL', 1, 9, 0, 'pending', now())`,
              [`sol:${oldest}:0`, oldest],
            );
          },
          'INSERT INTO deposits (%unnest($1::text[], $2::text[]%',
        );
      }
      await noneCredited(chunk);
    }
    await publish(10);
    const last = await startService('work', env, async () => true);
    workers.push(last);
    await until(
      'every deposit credited',
      async () => {
        const [row] = await db.query<{ n: bigint | number }>(
          `SELECT count(*) AS n FROM deposits WHERE status = 'credited'`,
        );
        return Number(row?.n) === references.length;
      },
      120_000,
    );
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
  }, 240_000);
});
