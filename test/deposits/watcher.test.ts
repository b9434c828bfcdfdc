import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { linkWallet } from '../../src/accounts/wallets.js';
import { createContext } from '../../src/context.js';
import type { Database } from '../../src/db/database.js';
import { rescanRange } from '../../src/deposits/operator.js';
import type { DepositPrices } from '../../src/deposits/prices.js';
import { fixedDepositPrices } from '../../src/deposits/prices.js';
import type { SolanaRpc } from '../../src/deposits/rpc.js';
import { createSolanaRpcClient } from '../../src/deposits/rpc-client.js';
import { type Treasury, treasuryOf } from '../../src/deposits/treasury.js';
import { createDepositWatcher } from '../../src/deposits/watcher.js';
import { listTransactions } from '../../src/ledger/history.js';
import { ManualClock } from '../../src/lib/clock.js';
import { silentLog } from '../../src/logger.js';
import { clearSecretBox } from '../../src/webhooks/secret-box.js';
import { runCliOn } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { balanceOf, expectLedgerReconciles } from '../helpers/ledger.js';
import * as cases from '../helpers/solana/cases.js';
import { FakeSolanaRpc } from '../helpers/solana/rpc-server.js';
import { DepositWorld, USDC_MINT } from '../helpers/solana/world.js';

let database: TestDatabase;
let db: Database;
let world: DepositWorld;
let rpc: FakeSolanaRpc;
let client: SolanaRpc;
let treasury: Treasury;
let creatingAta: cases.DepositCase;
const clock = new ManualClock('2026-11-25T12:00:00Z');
const PRICES = fixedDepositPrices({ SOL: 150, USDC: 1.0 });

beforeAll(async () => {
  database = await createTestDatabase();
  db = database.db;
  world = await DepositWorld.create();
  treasury = await treasuryOf(world.treasury.address, USDC_MINT);
  // The first USDC deposit creates the treasury's USDC account in its own transaction (as a wallet
  // does for a recipient without one); every later case, whichever runs, finds the account there.
  creatingAta = await cases.usdcDepositCreatingAccount(world, 2_000_000n);
});

afterAll(async () => {
  await database.close();
});

beforeEach(async () => {
  await rpc?.close();
  rpc = await FakeSolanaRpc.start();
  client = createSolanaRpcClient({
    url: rpc.url,
    timeoutMs: 10_000,
    maxAttempts: 3,
    batchSize: 4,
    sleep: async () => {},
  });
  // Each case starts from an empty chain view: the cursors and rows of the last one go.
  await db.query('DELETE FROM deposit_cursors');
  await db.query('DELETE FROM task_leases');
});

afterAll(async () => {
  await rpc?.close();
});

function watcher(
  options: { prices?: DepositPrices; pageSize?: number; chunkSize?: number; holder?: string } = {},
) {
  return createDepositWatcher({
    db,
    clock,
    log: silentLog,
    rpc: client,
    treasury,
    prices: options.prices ?? PRICES,
    settings: { pollMs: 1000, minUsdMicros: 1_000_000n },
    pageSize: options.pageSize ?? 1000,
    chunkSize: options.chunkSize ?? 100,
    holder: options.holder ?? 'test',
  });
}

async function liveAccount(wallet?: string) {
  return createAccount(createContext(db, clock), { mode: 'live', walletAddress: wallet }, clearSecretBox);
}

async function rowsOf(signature: string) {
  return db.query<{
    reference: string;
    status: string;
    reason: string | null;
    account_id: string | null;
    usd_micros: bigint | null;
    rate: string | null;
    // numeric(20,0): any u64, as text (migration 0027).
    amount: string;
    slot: bigint;
    ledger_entry_id: bigint | null;
  }>('SELECT * FROM deposits WHERE signature = $1 ORDER BY reference', [signature]);
}

async function entriesOf(reference: string) {
  return db.query<{ account_id: string; amount_micros: bigint; memo: string }>(
    `SELECT account_id, amount_micros, memo FROM ledger_entries WHERE kind = 'deposit' AND reference = $1`,
    [reference],
  );
}

const LAMPORTS_PER_SOL = 1_000_000_000n;

describe('the deposit watcher', () => {
  it('credits SOL from the sign-in wallet and from a linked wallet, once each, at the rate, with amount and slot', async () => {
    const signIn = await world.user();
    const linked = await world.user();
    const account = await liveAccount(signIn.address);
    await linkWallet(createContext(db, clock), { accountId: account.id, address: linked.address });
    const a = await cases.solDeposit(world, LAMPORTS_PER_SOL / 10n, signIn); // 0.1 SOL = 15 USD
    const b = await cases.solDeposit(world, LAMPORTS_PER_SOL / 4n, linked); // 0.25 SOL = 37.5 USD
    rpc.publish(a.tx);
    rpc.publish(b.tx);
    const report = await watcher().poll();
    expect(report?.written.credited).toBe(2);
    const [rowA] = await rowsOf(a.tx.signature);
    expect(rowA).toMatchObject({
      reference: `sol:${a.tx.signature}:0`,
      status: 'credited',
      reason: 'wallet',
      account_id: account.id,
      rate: '150',
      usd_micros: 15_000_000n,
      amount: '100000000',
      slot: BigInt(a.tx.slot),
    });
    expect(await entriesOf(`sol:${b.tx.signature}:0`)).toEqual([
      { account_id: account.id, amount_micros: 37_500_000n, memo: `0.25 SOL at 150 USD, slot ${b.tx.slot}` },
    ]);
    expect(await balanceOf(db, account.id)).toBe(52_500_000n);
    // /account/transactions shows the token, its amount, the rate and the slot with each entry.
    const { transactions } = await listTransactions(createContext(db, clock), account.id, {
      kind: 'deposit',
    });
    expect(transactions.map((t) => [t.amountUsd, t.reference, t.chain])).toEqual([
      [
        '37.50',
        `sol:${b.tx.signature}:0`,
        { token: 'SOL', amount: '0.25', rateUsd: '150', slot: b.tx.slot, signature: b.tx.signature },
      ],
      [
        '15.00',
        `sol:${a.tx.signature}:0`,
        { token: 'SOL', amount: '0.1', rateUsd: '150', slot: a.tx.slot, signature: a.tx.signature },
      ],
    ]);
    // Polling again finds nothing new; nothing doubles.
    expect((await watcher().poll())?.written.credited).toBe(0);
    expect(await balanceOf(db, account.id)).toBe(52_500_000n);
    await expectLedgerReconciles(db);
  });

  it('USDC transferChecked, plain transfer, the ATA created in the same transaction, and two transfers in one', async () => {
    const checked = creatingAta;
    const plain = await cases.usdcPlainDeposit(world, 3_000_000n);
    const again = await cases.usdcCheckedDeposit(world, 4_000_000n);
    const two = await cases.twoDeposits(world, 5_000_000n, LAMPORTS_PER_SOL / 100n); // 5 USDC + 1.5 USD of SOL
    const owners = new Map<string, string>();
    for (const c of [checked, plain, again, two]) {
      owners.set(c.tx.signature, (await liveAccount(c.sender)).id);
      rpc.publish(c.tx);
    }
    await watcher().poll();
    for (const [c, usd] of [
      [checked, 2_000_000n],
      [plain, 3_000_000n],
      [again, 4_000_000n],
    ] as const) {
      const [row] = await rowsOf(c.tx.signature);
      expect(row).toMatchObject({
        status: 'credited',
        account_id: owners.get(c.tx.signature),
        usd_micros: usd,
        rate: '1',
      });
    }
    // The ATA-creating transaction's deposit is its second instruction.
    expect((await rowsOf(checked.tx.signature)).map((r) => r.reference)).toEqual([
      `sol:${checked.tx.signature}:1`,
    ]);
    const pair = await rowsOf(two.tx.signature);
    expect(pair.map((r) => [r.reference, r.status, r.usd_micros])).toEqual([
      [`sol:${two.tx.signature}:0`, 'credited', 5_000_000n],
      [`sol:${two.tx.signature}:1`, 'credited', 1_500_000n],
    ]);
    expect(await balanceOf(db, owners.get(two.tx.signature) as string)).toBe(6_500_000n);
    await expectLedgerReconciles(db);
  });

  it('ignores failed transactions, other mints, Token-2022 and transfers to others; dust is recorded as ignored', async () => {
    const failed = await cases.failedUsdcDeposit(world, 1_000_000n, 9_000_000n);
    const other = await cases.otherMintTransfer(world, world.otherMint, 5_000_000n);
    const t22 = await cases.otherMintTransfer(world, world.token2022Mint, 5_000_000n);
    const beside = await cases.depositBesideOtherTransfer(world, 7_000_000n, LAMPORTS_PER_SOL / 50n);
    const dust = await cases.usdcCheckedDeposit(world, 999_999n);
    for (const c of [failed, other, t22, beside, dust]) {
      await liveAccount(c.sender);
      rpc.publish(c.tx);
    }
    await watcher().poll();
    expect(await rowsOf(failed.tx.signature)).toEqual([]);
    expect(await rowsOf(other.tx.signature)).toEqual([]);
    expect(await rowsOf(t22.tx.signature)).toEqual([]);
    // Only the SOL to the treasury (instruction 1) is ours; the USDC to someone else is not.
    expect((await rowsOf(beside.tx.signature)).map((r) => [r.reference, r.status, r.usd_micros])).toEqual([
      [`sol:${beside.tx.signature}:1`, 'credited', 3_000_000n],
    ]);
    expect(await rowsOf(dust.tx.signature)).toMatchObject([
      { status: 'ignored', reason: 'below_minimum', ledger_entry_id: null, usd_micros: 999_999n },
    ]);
    expect(await entriesOf(`sol:${dust.tx.signature}:0`)).toEqual([]);
  });

  it('an unknown wallet is unattributed, then assigned by the operator once; a Solana Pay reference finds its account', async () => {
    const unknown = await cases.usdcCheckedDeposit(world, 6_000_000n);
    const pay = await cases.solanaPayUsdcDeposit(world, 8_000_000n, 'order 1');
    const paySol = await cases.solanaPaySolDeposit(world, LAMPORTS_PER_SOL / 20n);
    const payee = await liveAccount();
    const solPayee = await liveAccount();
    await db.query('UPDATE accounts SET deposit_reference = $2 WHERE id = $1', [payee.id, pay.reference]);
    await db.query('UPDATE accounts SET deposit_reference = $2 WHERE id = $1', [
      solPayee.id,
      paySol.reference,
    ]);
    for (const c of [unknown, pay, paySol]) rpc.publish(c.tx);
    await watcher().poll();
    expect(await rowsOf(unknown.tx.signature)).toMatchObject([
      { status: 'unattributed', account_id: null, usd_micros: 6_000_000n, ledger_entry_id: null },
    ]);
    expect(await rowsOf(pay.tx.signature)).toMatchObject([
      { status: 'credited', reason: 'reference', account_id: payee.id, usd_micros: 8_000_000n },
    ]);
    expect(await rowsOf(paySol.tx.signature)).toMatchObject([
      { status: 'credited', reason: 'reference', account_id: solPayee.id, usd_micros: 7_500_000n },
    ]);

    const owner = await liveAccount();
    const sandbox = await createAccount(createContext(db, clock), { mode: 'sandbox' }, clearSecretBox);
    const toSandbox = await runCliOn(
      db,
      ['deposits', 'assign', unknown.tx.signature, sandbox.id, '--json'],
      {},
    );
    expect(toSandbox.status).not.toBe(0);
    expect(toSandbox.stdout + toSandbox.stderr).toMatch(/sandbox/);
    const assigned = await runCliOn(db, ['deposits', 'assign', unknown.tx.signature, owner.id, '--json'], {});
    expect(assigned.status, assigned.stderr).toBe(0);
    expect(JSON.parse(assigned.stdout).credited).toMatchObject([
      {
        reference: `sol:${unknown.tx.signature}:0`,
        status: 'credited',
        usdValue: '6.00',
        accountId: owner.id,
      },
    ]);
    const twice = await runCliOn(db, ['deposits', 'assign', unknown.tx.signature, owner.id, '--json'], {});
    expect(twice.status).not.toBe(0);
    expect(twice.stdout + twice.stderr).toMatch(/no unattributed or held deposit; nothing done/);
    expect(await balanceOf(db, owner.id)).toBe(6_000_000n);
    expect(await rowsOf(unknown.tx.signature)).toMatchObject([
      { status: 'credited', reason: 'operator', account_id: owner.id },
    ]);
    // The watcher, polling again, leaves the operator's decision alone.
    await watcher().poll();
    expect(await entriesOf(`sol:${unknown.tx.signature}:0`)).toHaveLength(1);
    await expectLedgerReconciles(db);
  });

  it('an inner (CPI) transfer is a deposit; signed by a program address, it falls to the operator', async () => {
    const inner = await cases.innerUsdcDeposit(world, 3_000_000n);
    await liveAccount(inner.sender); // the payer's wallet is known, but the PDA signed the transfer
    rpc.publish(inner.tx);
    await watcher().poll();
    expect(await rowsOf(inner.tx.signature)).toMatchObject([
      { reference: `sol:${inner.tx.signature}:0.0`, status: 'unattributed', usd_micros: 3_000_000n },
    ]);
  });

  it('never credits a sandbox account: its wallet is nobody’s for the chain', async () => {
    const wallet = await world.user();
    const sandbox = await createAccount(
      createContext(db, clock),
      { mode: 'sandbox', walletAddress: wallet.address },
      clearSecretBox,
    );
    const sol = await cases.solDeposit(world, LAMPORTS_PER_SOL / 10n, wallet);
    rpc.publish(sol.tx);
    await watcher().poll();
    expect(await rowsOf(sol.tx.signature)).toMatchObject([{ status: 'unattributed', account_id: null }]);
    expect(await balanceOf(db, sandbox.id)).toBe(0n);
  });

  it('pending at confirmed, credited once at finalized; one that never finalises disappears', async () => {
    const sender = await world.user();
    const account = await liveAccount(sender.address);
    const settles = await cases.solDeposit(world, LAMPORTS_PER_SOL / 10n, sender);
    rpc.publish(settles.tx, { finalized: false });
    const orphan = await cases.solDeposit(world, LAMPORTS_PER_SOL / 5n, sender);
    rpc.publish(orphan.tx, { orphaned: true });
    const first = await watcher().poll();
    expect(first?.pending).toBe(2);
    expect(await rowsOf(settles.tx.signature)).toMatchObject([
      { status: 'pending', account_id: account.id, usd_micros: null, ledger_entry_id: null },
    ]);
    expect(await rowsOf(orphan.tx.signature)).toMatchObject([{ status: 'pending' }]);
    expect(await balanceOf(db, account.id)).toBe(0n);
    // Still only confirmed: still pending, still nothing credited.
    await watcher().poll();
    expect(await balanceOf(db, account.id)).toBe(0n);

    rpc.ledger.finalizeThrough(orphan.tx.slot); // the first finalises; the orphan's fork is gone
    await watcher().poll();
    expect(await rowsOf(settles.tx.signature)).toMatchObject([
      { status: 'credited', usd_micros: 15_000_000n },
    ]);
    expect(await rowsOf(orphan.tx.signature)).toEqual([]);
    expect(await balanceOf(db, account.id)).toBe(15_000_000n);
    await watcher().poll();
    expect(await entriesOf(`sol:${settles.tx.signature}:0`)).toHaveLength(1);
  });

  it('USDC off its peg is held; SOL is priced at its block time', async () => {
    const usdc = await cases.usdcCheckedDeposit(world, 10_000_000n);
    const sol = await cases.solDeposit(world, LAMPORTS_PER_SOL);
    await liveAccount(usdc.sender);
    const solOwner = await liveAccount(sol.sender);
    rpc.publish(usdc.tx);
    rpc.publish(sol.tx);
    const asked: [string, string | null][] = [];
    const prices: DepositPrices = {
      async at(asset, blockTime) {
        asked.push([asset, blockTime?.toISOString() ?? null]);
        if (asset === 'USDC') return 0.97;
        // A price that depends on the time: the deposit must be valued at its own block's.
        return blockTime !== null && blockTime.getTime() === sol.tx.blockTime * 1000 ? 123.456789 : 1;
      },
    };
    await watcher({ prices }).poll();
    expect(await rowsOf(usdc.tx.signature)).toMatchObject([
      { status: 'held', reason: 'usdc_off_peg', ledger_entry_id: null, usd_micros: 10_000_000n },
    ]);
    expect(await rowsOf(sol.tx.signature)).toMatchObject([
      { status: 'credited', rate: '123.456789', usd_micros: 123_456_789n },
    ]);
    expect(asked).toContainEqual(['SOL', new Date(sol.tx.blockTime * 1000).toISOString()]);
    expect(await balanceOf(db, solOwner.id)).toBe(123_456_789n);
  });

  it('pages, restarts from its cursor, and a rescan of a credited range doubles nothing', async () => {
    const sender = await world.user();
    const account = await liveAccount(sender.address);
    const first = [];
    for (let i = 0; i < 7; i++) {
      const c = await cases.solDeposit(world, LAMPORTS_PER_SOL / 100n, sender);
      rpc.publish(c.tx);
      first.push(c);
    }
    expect((await watcher({ pageSize: 3, chunkSize: 2 }).poll())?.written.credited).toBe(7);
    const pagesBefore = rpc.callsOf('getSignaturesForAddress').length;
    expect(pagesBefore).toBeGreaterThanOrEqual(4); // the wallet's 7 took 3 pages of 3, the USDC account 1
    // A new watcher (a restarted worker) resumes from the stored cursor: it asks only for what is newer.
    const later = await cases.solDeposit(world, LAMPORTS_PER_SOL / 100n, sender);
    rpc.publish(later.tx);
    expect((await watcher({ pageSize: 3, holder: 'test' }).poll())?.written.credited).toBe(1);
    const resumed = rpc.callsOf('getSignaturesForAddress').slice(pagesBefore);
    expect((resumed[0]?.params[1] as { until?: string } | undefined)?.until).toBe(first[6]?.tx.signature);
    expect(await balanceOf(db, account.id)).toBe(12_000_000n);

    // Rescans: a range of the history read again, by the library and by the CLI.
    const range = await rescanRange(
      client,
      treasury,
      { since: new Date((first[0] as cases.DepositCase).tx.blockTime * 1000) },
      3,
    );
    expect(range.map((s) => s.signature)).toEqual(
      expect.arrayContaining([...first, later].map((c) => c.tx.signature)),
    );
    const again = await watcher().process(range);
    expect(again.written).toEqual({ credited: 0, unattributed: 0, held: 0, ignored: 0 });
    const cli = await runCliOn(db, ['deposits', 'rescan', '--before', later.tx.signature, '--json'], {
      SOLANA_RPC_URL: rpc.url,
      DEPOSIT_ADDRESS: world.treasury.address,
    });
    expect(cli.status, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout).written).toEqual({ credited: 0, unattributed: 0, held: 0, ignored: 0 });
    expect(await balanceOf(db, account.id)).toBe(12_000_000n);
    await expectLedgerReconciles(db);

    const listed = await runCliOn(
      db,
      ['deposits', 'list', '--status', 'credited', '--account', account.id, '--json'],
      {},
    );
    expect(JSON.parse(listed.stdout).deposits).toHaveLength(8);
    expect(JSON.parse(listed.stdout).deposits[0]).toMatchObject({
      reference: `sol:${later.tx.signature}:0`,
      asset: 'SOL',
      amount: '0.01',
      rateUsd: '150',
      usdValue: '1.50',
      slot: later.tx.slot,
    });
    const bad = await runCliOn(db, ['deposits', 'list', '--status', 'lost'], {});
    expect(bad.status).not.toBe(0);
  });

  it('one active watcher: a second holder finds the lease taken and does nothing', async () => {
    const c = await cases.solDeposit(world, LAMPORTS_PER_SOL / 10n);
    rpc.publish(c.tx);
    expect(await watcher({ holder: 'a' }).poll()).not.toBeNull();
    expect(await watcher({ holder: 'b' }).poll()).toBeNull();
    clock.advance(10_000); // a's lease lapses (4 polls' worth): b takes over
    expect(await watcher({ holder: 'b' }).poll()).not.toBeNull();
  });

  it('an RPC failure fails the poll without moving the cursor, and records it for /readyz', async () => {
    const c = await cases.solDeposit(world, LAMPORTS_PER_SOL / 10n);
    rpc.publish(c.tx);
    rpc.failNext({ kind: 'rpc-error', code: -32602, message: 'Invalid params' }, 1, 'getTransaction');
    await expect(watcher().poll()).rejects.toMatchObject({ kind: 'rpc_error' });
    const [state] = await db.query<{ last_error: string }>('SELECT last_error FROM deposit_watcher');
    expect(state?.last_error).toMatch(/Invalid params/);
    expect(await db.query('SELECT * FROM deposit_cursors')).toEqual([]);
    await watcher().poll();
    expect(await rowsOf(c.tx.signature)).toHaveLength(1);
    const [after] = await db.query<{ last_error: string | null }>('SELECT last_error FROM deposit_watcher');
    expect(after?.last_error).toBeNull();
  });
});
