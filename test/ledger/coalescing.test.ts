import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { createContext } from '../../src/context.js';
import type { Database } from '../../src/db/database.js';
import { CoalescingBiller } from '../../src/ledger/coalescing-biller.js';
import { creditDeposit } from '../../src/ledger/ledger.js';
import { systemClock } from '../../src/lib/clock.js';
import { clearSecretBox } from '../../src/webhooks/secret-box.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';

const CENT = 10_000n;
let database: TestDatabase;
let db: Database;

beforeAll(async () => {
  database = await createTestDatabase();
  db = database.db;
});
afterAll(async () => {
  await expectLedgerReconciles(db);
  await database.close();
});

async function account(balance: bigint): Promise<string> {
  const { id } = await createAccount(createContext(db, systemClock), { mode: 'live' }, clearSecretBox);
  if (balance > 0n)
    await creditDeposit(createContext(db, systemClock), {
      accountId: id,
      amountMicros: balance,
      reference: `seed-${id}`,
    });
  return id;
}

describe('coalesced charges', () => {
  it('a batch mixing accounts and insufficient balances decides each charge as if it ran alone, in order', async () => {
    const a = await account(3n * CENT); // 0.03
    const b = await account(0n);
    const c = await account(100n * CENT); // 1.00
    const biller = new CoalescingBiller(db, { maxBatch: 1000, maxInFlight: 1 });
    // The first charge goes out alone; everything queued behind it shares the next statement.
    const plan: [string, bigint][] = [
      [c, 50n * CENT],
      [a, CENT],
      [b, CENT],
      [a, 2n * CENT], // a: 0.02 left → succeeds, 0.00 left
      [c, 60n * CENT], // c: 0.50 left → refused
      [a, CENT], // a: refused
      [c, 50n * CENT], // c: a later, smaller charge still fits → succeeds
      [b, CENT],
      [c, CENT], // c: refused (0.00)
    ];
    const outcomes = await Promise.all(
      plan.map(([accountId, amountMicros], i) =>
        biller.charge({ accountId, amountMicros, operation: 'test', requestId: `req_${i}` }),
      ),
    );
    expect(outcomes.map((o) => (o.ok ? String(o.balanceMicros) : o.reason))).toEqual([
      '500000',
      '20000',
      'INSUFFICIENT_BALANCE',
      '0',
      'INSUFFICIENT_BALANCE',
      'INSUFFICIENT_BALANCE',
      '0',
      'INSUFFICIENT_BALANCE',
      'INSUFFICIENT_BALANCE',
    ]);
    expect(biller.stats).toEqual({ batches: 2, charges: 9, largestBatch: 8 });
    expect([await balanceOf(db, a), await balanceOf(db, b), await balanceOf(db, c)]).toEqual([0n, 0n, 0n]);
    expect(await countEntries(db, a, 'charge')).toBe(2);
    expect(await countEntries(db, c, 'charge')).toBe(2);
    // Each charge entry records its own request.
    const [entry] = await db.query(
      `SELECT request_id FROM ledger_entries WHERE account_id = $1 AND kind = 'charge' ORDER BY id DESC`,
      [c],
    );
    expect(entry).toEqual({ request_id: 'req_6' });
    await expectLedgerReconciles(db);
  });

  it('two instances coalescing against the same accounts: exact totals, no deadlock, reconciled', async () => {
    const accounts = await Promise.all(Array.from({ length: 5 }, () => account(100n * CENT)));
    const instances = [
      new CoalescingBiller(db, { maxBatch: 64, maxInFlight: 2 }),
      new CoalescingBiller(db, { maxBatch: 64, maxInFlight: 2 }),
    ];
    const outcomes = await Promise.all(
      Array.from({ length: 1200 }, (_, i) =>
        (instances[i % 2] as CoalescingBiller).charge({
          accountId: accounts[(i * 7) % 5] as string,
          amountMicros: CENT,
          operation: 'test',
        }),
      ),
    );
    // 5 accounts × 1.00 = 500 charges of 0.01 can succeed, no more.
    expect(outcomes.filter((o) => o.ok)).toHaveLength(500);
    for (const id of accounts) expect(await balanceOf(db, id)).toBe(0n);
    expect(instances.reduce((n, b) => n + b.stats.batches, 0)).toBeLessThan(1200);
    await expectLedgerReconciles(db);
  });

  it('a failed statement fails every charge of its batch and commits none of them', async () => {
    const first = await account(CENT);
    const a = await account(2n * CENT);
    const biller = new CoalescingBiller(db, { maxBatch: 10, maxInFlight: 1 });
    const results = await Promise.allSettled([
      // Goes alone, and keeps the next two waiting so that they share one statement.
      biller.charge({ accountId: first, amountMicros: CENT, operation: 'test' }),
      biller.charge({ accountId: a, amountMicros: CENT, operation: 'test' }),
      // A charge entry must name its operation (a CHECK): this item makes the statement fail.
      biller.charge({ accountId: a, amountMicros: CENT, operation: null as unknown as string }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    expect(await balanceOf(db, first)).toBe(0n);
    expect(await balanceOf(db, a)).toBe(2n * CENT);
    expect(await countEntries(db, a, 'charge')).toBe(0);
  });

  it('when the one-by-one pass fails, the charges the first pass committed still succeed', async () => {
    const first = await account(CENT);
    const covered = await account(100n * CENT);
    const short = await account(CENT);
    const biller = new CoalescingBiller(db, { maxBatch: 10, maxInFlight: 1 });
    const results = await Promise.allSettled([
      biller.charge({ accountId: first, amountMicros: CENT, operation: 'test' }),
      // The next three share a statement: `covered` is charged by the first pass; `short` cannot
      // pay for both of its items, so they go to the second pass, which the bad item makes fail.
      biller.charge({ accountId: covered, amountMicros: CENT, operation: 'test' }),
      biller.charge({ accountId: short, amountMicros: CENT, operation: null as unknown as string }),
      biller.charge({ accountId: short, amountMicros: CENT, operation: 'test' }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected']);
    expect(results[1]).toMatchObject({ value: { ok: true, balanceMicros: 99n * CENT } });
    expect(await balanceOf(db, covered)).toBe(99n * CENT);
    expect(await balanceOf(db, short)).toBe(CENT);
    expect(await countEntries(db, short, 'charge')).toBe(0);
    await expectLedgerReconciles(db);
  });

  it('refuses at once, without a second statement, the items of an account that cannot pay any of them', async () => {
    const first = await account(CENT);
    const poor = await account(CENT);
    const rich = await account(100n * CENT);
    let statements = 0;
    const counting = Object.assign(Object.create(db) as Database, {
      query: (...args: Parameters<Database['query']>) => {
        statements++;
        return db.query(...args);
      },
    });
    const biller = new CoalescingBiller(counting, { maxBatch: 10, maxInFlight: 1 });
    const outcomes = await Promise.all([
      biller.charge({ accountId: first, amountMicros: CENT, operation: 'test' }),
      biller.charge({ accountId: poor, amountMicros: 2n * CENT, operation: 'test' }),
      biller.charge({ accountId: rich, amountMicros: CENT, operation: 'test' }),
      biller.charge({ accountId: poor, amountMicros: 3n * CENT, operation: 'test' }),
    ]);
    expect(outcomes.map((o) => o.ok)).toEqual([true, false, true, false]);
    expect(statements).toBe(2);
    expect(await balanceOf(db, poor)).toBe(CENT);
  });
});

describe('batches in flight', () => {
  it('never sends two batches holding the same account at once; disjoint accounts go side by side', async () => {
    const hot = await account(1000n * CENT);
    const others = await Promise.all(Array.from({ length: 4 }, () => account(1000n * CENT)));
    const inFlight = new Map<number, string[]>();
    let overlaps = 0;
    let maxParallel = 0;
    let next = 0;
    // A database that records which accounts each batch statement holds while it runs.
    const watched = {
      ...db,
      kind: db.kind,
      transaction: db.transaction.bind(db),
      exec: db.exec.bind(db),
      close: db.close.bind(db),
      async query<R>(sql: Parameters<Database['query']>[0], params?: readonly unknown[]): Promise<R[]> {
        const accounts = [...new Set((params?.[0] as string[]) ?? [])];
        const id = next++;
        for (const held of inFlight.values()) if (held.some((a) => accounts.includes(a))) overlaps++;
        inFlight.set(id, accounts);
        maxParallel = Math.max(maxParallel, inFlight.size);
        try {
          return await db.query<R>(sql, params);
        } finally {
          inFlight.delete(id);
        }
      },
    } as Database;
    const biller = new CoalescingBiller(watched, { maxBatch: 1000, maxInFlight: 4 });
    const outcomes = await Promise.all(
      Array.from({ length: 400 }, (_, i) =>
        biller.charge({
          accountId: i % 2 ? hot : (others[i % 4] as string),
          amountMicros: CENT,
          operation: 'test',
        }),
      ),
    );
    expect(outcomes.every((o) => o.ok)).toBe(true);
    expect(overlaps).toBe(0);
    expect(maxParallel).toBeGreaterThan(1);
    await expectLedgerReconciles(db);
  });
});
