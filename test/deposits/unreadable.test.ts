import { address, lamports } from '@solana/kit';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { createContext } from '../../src/context.js';
import type { Database } from '../../src/db/database.js';
import { rescanRange } from '../../src/deposits/operator.js';
import { fixedDepositPrices } from '../../src/deposits/prices.js';
import { createSolanaRpcClient } from '../../src/deposits/rpc-client.js';
import { type Treasury, treasuryOf } from '../../src/deposits/treasury.js';
import { createDepositWatcher } from '../../src/deposits/watcher.js';
import { creditDeposit } from '../../src/ledger/index.js';
import { ManualClock } from '../../src/lib/clock.js';
import { silentLog } from '../../src/logger.js';
import { registry } from '../../src/metrics/metrics.js';
import { clearSecretBox } from '../../src/webhooks/secret-box.js';
import { runCliOn } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { balanceOf, expectLedgerReconciles } from '../helpers/ledger.js';
import * as cases from '../helpers/solana/cases.js';
import { FakeSolanaRpc } from '../helpers/solana/rpc-server.js';
import { DepositWorld, USDC_MINT } from '../helpers/solana/world.js';

/**
 * Transactions the watcher cannot book (docs/deposits.md#unreadable-transactions): real
 * transactions executed in LiteSVM and served by the fake RPC, read by the real client. Each is
 * recorded once with its reason, listed by `sibyl deposits list --unreadable`, and the cursor moves
 * past it: the normal deposit after it is credited by the same poll. Before, one of them failed
 * every poll, and every later deposit waited.
 */

const U64_MAX = 18_446_744_073_709_551_615n;
const LAMPORTS_PER_SOL = 1_000_000_000n;

let database: TestDatabase;
let db: Database;
let rpc: FakeSolanaRpc;
const clock = new ManualClock('2026-11-25T12:00:00Z');

beforeAll(async () => {
  database = await createTestDatabase();
  db = database.db;
});
afterAll(async () => {
  await rpc?.close();
  await database.close();
});
beforeEach(async () => {
  await rpc?.close();
  rpc = await FakeSolanaRpc.start();
});

/** A fresh chain (its USDC supply starts at 0, so a u64-max transfer can be minted) and its treasury. */
async function chain(): Promise<{ world: DepositWorld; treasury: Treasury }> {
  const world = await DepositWorld.create();
  rpc.publish(await world.openAta(world.treasury, world.treasury.address));
  return { world, treasury: await treasuryOf(world.treasury.address, USDC_MINT) };
}

function watcher(treasury: Treasury) {
  return createDepositWatcher({
    db,
    clock,
    log: silentLog,
    rpc: createSolanaRpcClient({ url: rpc.url, timeoutMs: 10_000, maxAttempts: 1, batchSize: 10 }),
    treasury,
    prices: fixedDepositPrices({ SOL: 150, USDC: 1.0 }),
    settings: { pollMs: 1000, minUsdMicros: 1_000_000n },
    holder: 'test',
  });
}

async function liveAccount(wallet: string) {
  return (
    await createAccount(createContext(db, clock), { mode: 'live', walletAddress: wallet }, clearSecretBox)
  ).id;
}

async function unreadableList() {
  const answer = await runCliOn(db, ['deposits', 'list', '--unreadable', '--json'], {});
  expect(answer.status, answer.stderr).toBe(0);
  return (
    JSON.parse(answer.stdout) as { transactions: { signature: string; slot: number; reason: string }[] }
  ).transactions;
}

describe('a transaction that cannot be booked', () => {
  it('a u64-max USDC transfer: pending with its exact amount, then recorded unreadable once; the SOL deposit after it is credited', async () => {
    const { world, treasury } = await chain();
    const whale = await world.user(U64_MAX);
    const account = await liveAccount(whale.address);
    const poison = await cases.usdcCheckedDeposit(world, U64_MAX, whale);
    expect(poison.tx.meta.err).toBeNull();
    const after = await cases.solDeposit(world, LAMPORTS_PER_SOL / 10n, whale); // 15.00 USD

    // Seen first at `confirmed`: its pending row holds the amount exactly (the column held a bigint).
    rpc.publish(poison.tx, { finalized: false });
    expect((await watcher(treasury).poll())?.pending).toBe(1);
    expect(
      await db.query('SELECT status, amount::text AS amount FROM deposits WHERE signature = $1', [
        poison.tx.signature,
      ]),
    ).toEqual([{ status: 'pending', amount: U64_MAX.toString() }]);

    rpc.publish(after.tx);
    const report = await watcher(treasury).poll();
    expect(report).toMatchObject({ written: { credited: 1 }, unreadable: 1, complete: true });
    expect(await balanceOf(db, account)).toBe(15_000_000n);
    expect(await db.query('SELECT status FROM deposits WHERE signature = $1', [poison.tx.signature])).toEqual(
      [],
    );
    expect(await unreadableList()).toEqual([
      {
        signature: poison.tx.signature,
        slot: poison.tx.slot,
        blockTime: expect.any(String),
        reason: `instruction 0: ${U64_MAX / 1_000_000n}.${U64_MAX % 1_000_000n} USDC is worth more than the ledger can hold`,
        seenAt: clock.now().toISOString(),
      },
    ]);
    // The cursor is past it: the next poll reads nothing again and records nothing twice.
    expect(await watcher(treasury).poll()).toMatchObject({
      written: { credited: 0, unattributed: 0, held: 0, ignored: 0 },
      unreadable: 0,
    });
    expect(await unreadableList()).toHaveLength(1);
    expect((await registry.getSingleMetric('sibyl_deposits')?.get())?.values).toContainEqual(
      expect.objectContaining({ labels: { status: 'unreadable' }, value: 1 }),
    );
    await expectLedgerReconciles(db);
  });

  it('a transfer the parser refuses (2^53 lamports: beyond what JSON carries exactly): recorded, and the deposits around it credited', async () => {
    const { world, treasury } = await chain();
    // More than the test validator's faucet gives: the wallet's account is written directly.
    const rich = await world.chain.wallet(0n);
    world.chain.svm.setAccount({
      address: rich.address,
      data: new Uint8Array(),
      executable: false,
      lamports: lamports(2n ** 53n + 10n * LAMPORTS_PER_SOL),
      programAddress: address('11111111111111111111111111111111'),
      space: 0n,
    });
    const account = await liveAccount(rich.address);
    const before = await cases.solDeposit(world, LAMPORTS_PER_SOL / 10n, rich);
    const poison = await cases.solDeposit(world, 2n ** 53n, rich);
    expect(poison.tx.meta.err).toBeNull();
    const after = await cases.solDeposit(world, LAMPORTS_PER_SOL / 5n, rich);
    for (const c of [before, poison, after]) rpc.publish(c.tx);

    const report = await watcher(treasury).poll();
    expect(report).toMatchObject({ written: { credited: 2 }, unreadable: 1, complete: true });
    expect(await balanceOf(db, account)).toBe(45_000_000n);
    const listed = (await unreadableList()).find((t) => t.signature === poison.tx.signature);
    expect(listed).toMatchObject({
      signature: poison.tx.signature,
      reason: `transaction ${poison.tx.signature}: lamports beyond 2^53`,
    });
    // A rescan reads it again, records nothing twice and credits nothing twice.
    const again = await watcher(treasury).process(
      await rescanRange(
        createSolanaRpcClient({ url: rpc.url, timeoutMs: 10_000, maxAttempts: 1, batchSize: 10 }),
        treasury,
        {},
      ),
    );
    expect(again).toMatchObject({ written: { credited: 0 }, unreadable: 0 });
    expect(await balanceOf(db, account)).toBe(45_000_000n);
    await expectLedgerReconciles(db);
  });

  it('a deposit the database refuses (the balance it would make is beyond bigint): only its transaction is left out of the chunk', async () => {
    const { world, treasury } = await chain();
    const full = await world.user(2_000_000n);
    const fullAccount = await liveAccount(full.address);
    // An account the operator credited close to the ledger's ceiling (9,223,372.036854775807 million USD).
    await creditDeposit(createContext(db, clock), {
      accountId: fullAccount,
      amountMicros: 2n ** 63n - 1_000_000n,
      reference: 'ceiling',
    });
    const other = await world.user(3_000_000n);
    const otherAccount = await liveAccount(other.address);
    const poison = await cases.usdcCheckedDeposit(world, 2_000_000n, full);
    const normal = await cases.usdcCheckedDeposit(world, 3_000_000n, other);
    rpc.publish(poison.tx);
    rpc.publish(normal.tx);

    const report = await watcher(treasury).poll();
    expect(report).toMatchObject({ written: { credited: 1 }, unreadable: 1, complete: true });
    expect(await balanceOf(db, otherAccount)).toBe(3_000_000n);
    expect(await balanceOf(db, fullAccount)).toBe(2n ** 63n - 1_000_000n);
    const listed = (await unreadableList()).find((t) => t.signature === poison.tx.signature);
    expect(listed?.reason).toMatch(/^the database refused its deposits: .*out of range/);
    await expectLedgerReconciles(db);
  });
});
