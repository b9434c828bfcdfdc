import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { createContext } from '../../src/context.js';
import type { Database } from '../../src/db/database.js';
import { assignDeposits } from '../../src/deposits/assign.js';
import type { DepositPrices } from '../../src/deposits/prices.js';
import { createSolanaRpcClient } from '../../src/deposits/rpc-client.js';
import { type Treasury, treasuryOf } from '../../src/deposits/treasury.js';
import { createDepositWatcher } from '../../src/deposits/watcher.js';
import { ManualClock } from '../../src/lib/clock.js';
import { silentLog } from '../../src/logger.js';
import { createEndpoint } from '../../src/webhooks/endpoints.js';
import { clearSecretBox } from '../../src/webhooks/secret-box.js';
import { runCliOn } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { balanceOf, expectLedgerReconciles } from '../helpers/ledger.js';
import * as cases from '../helpers/solana/cases.js';
import { FakeSolanaRpc } from '../helpers/solana/rpc-server.js';
import { DepositWorld, USDC_MINT } from '../helpers/solana/world.js';

/**
 * `sibyl deposits assign` for held deposits (docs/deposits.md#value: USDC off its peg, or no price): credited
 * once, at 1.00 per USDC or at the rate the operator states, never to a sandbox account, and of two
 * concurrent assignments exactly one credits; each credit records its `deposit.credited` event (and
 * its endpoint deliveries) in the crediting transaction, as the watcher's do.
 */

let database: TestDatabase;
let db: Database;
let world: DepositWorld;
let rpc: FakeSolanaRpc;
let treasury: Treasury;
const clock = new ManualClock('2026-11-26T04:00:00Z');
const LAMPORTS_PER_SOL = 1_000_000_000n;
// USDC off its peg and no SOL price: every finalized deposit is held.
const NO_GOOD_PRICE: DepositPrices = { at: async (asset) => (asset === 'USDC' ? 0.96 : null) };

beforeAll(async () => {
  database = await createTestDatabase();
  db = database.db;
  world = await DepositWorld.create();
  await world.openAta(world.treasury, world.treasury.address);
  treasury = await treasuryOf(world.treasury.address, USDC_MINT);
  rpc = await FakeSolanaRpc.start();
});

afterAll(async () => {
  await rpc.close();
  await database.close();
});

/** Publishes the cases and lets the watcher book them (all held, by NO_GOOD_PRICE). */
async function booked(...published: cases.DepositCase[]) {
  for (const c of published) rpc.publish(c.tx);
  const client = createSolanaRpcClient({ url: rpc.url, timeoutMs: 10_000, maxAttempts: 3, batchSize: 10 });
  await createDepositWatcher({
    db,
    clock,
    log: silentLog,
    rpc: client,
    treasury,
    prices: NO_GOOD_PRICE,
    settings: { pollMs: 1000, minUsdMicros: 1_000_000n },
    holder: 'assign-test',
  }).poll();
}

async function live() {
  return (await createAccount(createContext(db, clock), { mode: 'live' }, clearSecretBox)).id;
}

async function rowsOf(signature: string) {
  return db.query<{
    reference: string;
    status: string;
    reason: string | null;
    account_id: string | null;
    rate: string | null;
    usd_micros: bigint | null;
    ledger_entry_id: bigint | null;
  }>(
    'SELECT reference, status, reason, account_id, rate, usd_micros, ledger_entry_id FROM deposits WHERE signature = $1 ORDER BY reference',
    [signature],
  );
}

/** The account's `deposit.credited` events and their deliveries' payloads. */
async function creditedEvents(accountId: string) {
  const events = await db.query<{ id: string; data: Record<string, unknown> }>(
    `SELECT id, data FROM account_events WHERE account_id = $1 AND type = 'deposit.credited' ORDER BY created_at, id`,
    [accountId],
  );
  const deliveries = await db.query<{ event_id: string; endpoint_id: string; payload: string }>(
    'SELECT event_id, endpoint_id, payload FROM webhook_deliveries WHERE account_id = $1 AND event_id IS NOT NULL',
    [accountId],
  );
  return { events, deliveries };
}

async function entriesOf(signature: string) {
  return db.query<{ account_id: string; amount_micros: bigint; memo: string; id: bigint }>(
    `SELECT id, account_id, amount_micros, memo FROM ledger_entries WHERE kind = 'deposit' AND reference LIKE $1`,
    [`sol:${signature}:%`],
  );
}

describe('sibyl deposits assign for held deposits', () => {
  it('held USDC: credited at 1.00 once; a second assignment does nothing and says so', async () => {
    const usdc = await cases.usdcCheckedDeposit(world, 12_500_000n);
    await booked(usdc);
    expect(await rowsOf(usdc.tx.signature)).toMatchObject([
      { status: 'held', reason: 'usdc_off_peg', ledger_entry_id: null },
    ]);
    const owner = await live();
    const assigned = await runCliOn(db, ['deposits', 'assign', usdc.tx.signature, owner, '--json'], {});
    expect(assigned.status, assigned.stderr).toBe(0);
    expect(JSON.parse(assigned.stdout).credited).toMatchObject([
      {
        reference: `sol:${usdc.tx.signature}:0`,
        status: 'credited',
        previousStatus: 'held',
        rateUsd: '1',
        usdValue: '12.50',
        accountId: owner,
      },
    ]);
    const [entry] = await entriesOf(usdc.tx.signature);
    expect(entry).toMatchObject({ account_id: owner, amount_micros: 12_500_000n });
    expect(entry?.memo).toMatch(
      /^12\.5 USDC at 1 USD, slot \d+; held \(usdc_off_peg\), valued by the operator$/,
    );
    expect(await rowsOf(usdc.tx.signature)).toEqual([
      {
        reference: `sol:${usdc.tx.signature}:0`,
        status: 'credited',
        reason: 'operator',
        account_id: owner,
        rate: '1',
        usd_micros: 12_500_000n,
        ledger_entry_id: entry?.id,
      },
    ]);

    const other = await live();
    const twice = await runCliOn(db, ['deposits', 'assign', usdc.tx.signature, other], {});
    expect(twice.status).not.toBe(0);
    expect(twice.stdout + twice.stderr).toMatch(/no unattributed or held deposit; nothing done/);
    expect(twice.stdout + twice.stderr).toContain(`credited to ${owner}`);
    expect(await balanceOf(db, owner)).toBe(12_500_000n);
    expect(await balanceOf(db, other)).toBe(0n);
    expect(await entriesOf(usdc.tx.signature)).toHaveLength(1);
    // The watcher, reading the transaction again, leaves the operator's decision alone.
    await booked();
    expect(await entriesOf(usdc.tx.signature)).toHaveLength(1);
    await expectLedgerReconciles(db);
  });

  it('held SOL needs the operator’s rate, stored as the entry’s; a rate for an unattributed deposit is refused', async () => {
    const sol = await cases.solDeposit(world, LAMPORTS_PER_SOL / 4n);
    await booked(sol);
    expect(await rowsOf(sol.tx.signature)).toMatchObject([
      { status: 'held', reason: 'no_price', rate: null, usd_micros: null },
    ]);
    const owner = await live();
    const bare = await runCliOn(db, ['deposits', 'assign', sol.tx.signature, owner], {});
    expect(bare.status).not.toBe(0);
    expect(bare.stdout + bare.stderr).toMatch(/held SOL \(no_price\): state its rate/);
    const junk = await runCliOn(db, ['deposits', 'assign', sol.tx.signature, owner, '1e3'], {});
    expect(junk.status).not.toBe(0);
    expect(junk.stdout + junk.stderr).toMatch(/not a decimal number/);
    expect(await balanceOf(db, owner)).toBe(0n);

    const assigned = await runCliOn(db, ['deposits', 'assign', sol.tx.signature, owner, '140.123456'], {});
    expect(assigned.status, assigned.stderr).toBe(0);
    expect(assigned.stdout).toMatch(/35\.030864 USD to .* at 140\.123456 USD per SOL/);
    expect(await rowsOf(sol.tx.signature)).toMatchObject([
      {
        status: 'credited',
        reason: 'operator',
        account_id: owner,
        rate: '140.123456',
        usd_micros: 35_030_864n,
      },
    ]);
    expect(await balanceOf(db, owner)).toBe(35_030_864n);

    // Unattributed deposits keep the value recorded at finalization: no rate for them.
    const stranger = await cases.solDeposit(world, LAMPORTS_PER_SOL / 10n);
    rpc.publish(stranger.tx);
    await createDepositWatcher({
      db,
      clock,
      log: silentLog,
      rpc: createSolanaRpcClient({ url: rpc.url, timeoutMs: 10_000, maxAttempts: 3, batchSize: 10 }),
      treasury,
      prices: { at: async () => 150 },
      settings: { pollMs: 1000, minUsdMicros: 1_000_000n },
      holder: 'assign-test',
    }).poll();
    expect(await rowsOf(stranger.tx.signature)).toMatchObject([
      { status: 'unattributed', usd_micros: 15_000_000n },
    ]);
    const rated = await runCliOn(db, ['deposits', 'assign', stranger.tx.signature, owner, '200'], {});
    expect(rated.status).not.toBe(0);
    expect(rated.stdout + rated.stderr).toMatch(/held deposits only/);
    const plain = await runCliOn(db, ['deposits', 'assign', stranger.tx.signature, owner], {});
    expect(plain.status, plain.stderr).toBe(0);
    expect(await balanceOf(db, owner)).toBe(35_030_864n + 15_000_000n);
    await expectLedgerReconciles(db);
  });

  it('records deposit.credited for each deposit credited, with its endpoint delivery, in the crediting transaction', async () => {
    const owner = await live();
    const endpoint = await createEndpoint(
      createContext(db, clock),
      clearSecretBox,
      { allowPrivateTargets: false },
      {
        accountId: owner,
        mode: 'live',
        url: 'https://hooks.example.com/sibyl',
        eventTypes: ['deposit.credited'],
      },
    );
    // A refused assignment (held SOL without a rate) rolls back whole: no event, no delivery.
    const mixed = await cases.twoDeposits(world, 2_000_000n, LAMPORTS_PER_SOL / 20n);
    await booked(mixed);
    await expect(
      assignDeposits(createContext(db, clock), { signature: mixed.tx.signature, accountId: owner }),
    ).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(await creditedEvents(owner)).toEqual({ events: [], deliveries: [] });

    // Two held USDC deposits in one transaction: two credits, two events, each with the balance after it.
    const batched = await cases.batchedUsdcDeposits(world, 7_250_000n, 1_500_000n);
    await booked(batched);
    expect(
      await assignDeposits(createContext(db, clock), { signature: batched.tx.signature, accountId: owner }),
    ).toHaveLength(2);
    const rows = await db.query<{ reference: string; slot: bigint; seen_at: Date }>(
      'SELECT reference, slot, seen_at FROM deposits WHERE signature = $1 ORDER BY reference',
      [batched.tx.signature],
    );
    const { events, deliveries } = await creditedEvents(owner);
    const expected = (i: number, amount: string, usdValue: string, balanceUsd: string) => ({
      id: rows[i]?.reference,
      status: 'credited',
      token: 'USDC',
      amount,
      usdValue,
      rateUsd: '1',
      signature: batched.tx.signature,
      slot: Number(rows[i]?.slot),
      reference: rows[i]?.reference,
      memo: null,
      createdAt: rows[i]?.seen_at.toISOString(),
      balanceUsd,
    });
    expect(events.map((e) => e.data).sort((x, y) => String(x.id).localeCompare(String(y.id)))).toEqual([
      expected(0, '7.25', '7.25', '7.25'),
      expected(1, '1.5', '1.50', '8.75'),
    ]);
    for (const event of events) expect(event.id).toMatch(/^evt_[1-9A-HJ-NP-Za-km-z]{24}$/);
    expect(deliveries).toHaveLength(2);
    for (const delivery of deliveries) {
      const event = events.find((e) => e.id === delivery.event_id);
      expect(delivery.endpoint_id).toBe(endpoint.id);
      expect(JSON.parse(delivery.payload)).toMatchObject({
        id: event?.id,
        type: 'deposit.credited',
        mode: 'live',
        data: event?.data,
      });
    }
    expect(await balanceOf(db, owner)).toBe(8_750_000n);
  });

  it('never to a sandbox account', async () => {
    const usdc = await cases.usdcCheckedDeposit(world, 3_000_000n);
    await booked(usdc);
    const sandbox = await createAccount(createContext(db, clock), { mode: 'sandbox' }, clearSecretBox);
    const refused = await runCliOn(db, ['deposits', 'assign', usdc.tx.signature, sandbox.id], {});
    expect(refused.status).not.toBe(0);
    expect(refused.stdout + refused.stderr).toMatch(/sandbox/);
    expect(await rowsOf(usdc.tx.signature)).toMatchObject([{ status: 'held', ledger_entry_id: null }]);
    expect(await balanceOf(db, sandbox.id)).toBe(0n);
  });

  it('one rate cannot value SOL and USDC together; of two concurrent assignments to two accounts exactly one credits', async () => {
    const two = await cases.twoDeposits(world, 4_000_000n, LAMPORTS_PER_SOL / 50n); // held USDC + held SOL
    const usdc = await cases.usdcCheckedDeposit(world, 9_000_000n);
    await booked(two, usdc);
    expect((await rowsOf(two.tx.signature)).map((r) => r.status)).toEqual(['held', 'held']);
    // One rate cannot value both SOL and USDC.
    await expect(
      assignDeposits(createContext(db, clock), {
        signature: two.tx.signature,
        accountId: await live(),
        rate: '2',
      }),
    ).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      message: expect.stringMatching(/both SOL and USDC/),
    });

    const signature = usdc.tx.signature;
    const [a, b] = [await live(), await live()];
    const results = await Promise.allSettled([
      assignDeposits(createContext(db, clock), { signature, accountId: a }),
      assignDeposits(createContext(db, clock), { signature, accountId: b }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(lost.reason).toMatchObject({ message: expect.stringMatching(/nothing done/) });
    const winner = results[0]?.status === 'fulfilled' ? a : b;
    expect(await balanceOf(db, winner)).toBe(9_000_000n);
    expect(await balanceOf(db, winner === a ? b : a)).toBe(0n);
    expect(await entriesOf(signature)).toHaveLength(1);
    expect(await rowsOf(signature)).toMatchObject([{ status: 'credited', account_id: winner }]);
    await expectLedgerReconciles(db);
  });
});
