import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { createContext, withTransaction } from '../../src/context.js';
import type { Database } from '../../src/db/database.js';
import { AppError } from '../../src/errors.js';
import { creditDeposits, DepositAlreadyCreditedError } from '../../src/ledger/deposit-batch.js';
import { creditDeposit } from '../../src/ledger/ledger.js';
import { systemClock } from '../../src/lib/clock.js';
import { clearSecretBox } from '../../src/webhooks/secret-box.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';

let database: TestDatabase;
let db: Database;
const ctx = () => createContext(db, systemClock);

beforeAll(async () => {
  database = await createTestDatabase();
  db = database.db;
});
afterAll(async () => {
  await expectLedgerReconciles(db);
  await database.close();
});

async function newAccount(): Promise<string> {
  return (await createAccount(ctx(), { mode: 'live' }, clearSecretBox)).id;
}

let n = 0;
const ref = () => `sol:batch-${++n}:0`;

describe('creditDeposits: a batch of deposits in one statement', () => {
  it('credits every item under its reference, running balances chained per account in batch order', async () => {
    const a = await newAccount();
    const b = await newAccount();
    await creditDeposit(ctx(), { accountId: a, amountMicros: 1_000_000n, reference: ref() });
    const refs = [ref(), ref(), ref(), ref()];
    const out = await creditDeposits(ctx(), [
      { accountId: a, amountMicros: 2_000_000n, reference: refs[0] as string, memo: 'first' },
      { accountId: b, amountMicros: 5_000_000n, reference: refs[1] as string },
      { accountId: a, amountMicros: 3_000_000n, reference: refs[2] as string },
      { accountId: b, amountMicros: 7_000_000n, reference: refs[3] as string },
    ]);
    expect(out.map((o) => o.balanceMicros)).toEqual([3_000_000n, 5_000_000n, 6_000_000n, 12_000_000n]);
    // Within an account, entry ids follow the running balance.
    expect((out[0]?.entryId as bigint) < (out[2]?.entryId as bigint)).toBe(true);
    expect((out[1]?.entryId as bigint) < (out[3]?.entryId as bigint)).toBe(true);
    expect(await balanceOf(db, a)).toBe(6_000_000n);
    expect(await balanceOf(db, b)).toBe(12_000_000n);
    const rows = await db.query<{
      reference: string;
      kind: string;
      amount_micros: bigint;
      memo: string | null;
    }>(
      `SELECT reference, kind, amount_micros, memo FROM ledger_entries WHERE reference = ANY($1::text[]) ORDER BY id`,
      [refs],
    );
    expect(rows).toEqual(
      expect.arrayContaining([
        { reference: refs[0], kind: 'deposit', amount_micros: 2_000_000n, memo: 'first' },
        { reference: refs[3], kind: 'deposit', amount_micros: 7_000_000n, memo: null },
      ]),
    );
    expect(rows).toHaveLength(4);
    await expectLedgerReconciles(db);
  });

  it('is all or nothing: a reference credited before, twice in the batch, or an unknown account writes nothing', async () => {
    const a = await newAccount();
    const used = ref();
    await creditDeposits(ctx(), [{ accountId: a, amountMicros: 1_000_000n, reference: used }]);
    const fresh = ref();
    await expect(
      creditDeposits(ctx(), [
        { accountId: a, amountMicros: 4_000_000n, reference: fresh },
        { accountId: a, amountMicros: 1_000_000n, reference: used },
      ]),
    ).rejects.toBeInstanceOf(DepositAlreadyCreditedError);
    const twice = ref();
    await expect(
      creditDeposits(ctx(), [
        { accountId: a, amountMicros: 1_000_000n, reference: twice },
        { accountId: a, amountMicros: 1_000_000n, reference: twice },
      ]),
    ).rejects.toBeInstanceOf(DepositAlreadyCreditedError);
    await expect(
      creditDeposits(ctx(), [
        { accountId: a, amountMicros: 1_000_000n, reference: ref() },
        { accountId: 'acc_missing', amountMicros: 1_000_000n, reference: ref() },
      ]),
    ).rejects.toMatchObject({ code: 'ACCOUNT_NOT_FOUND' });
    await expect(
      creditDeposits(ctx(), [{ accountId: a, amountMicros: 0n, reference: ref() }]),
    ).rejects.toBeInstanceOf(AppError);
    expect(await balanceOf(db, a)).toBe(1_000_000n);
    expect(await countEntries(db, a, 'deposit')).toBe(1);
    expect(await creditDeposits(ctx(), [])).toEqual([]);
  });

  it('joins the caller’s transaction: rolled back with it', async () => {
    const a = await newAccount();
    const reference = ref();
    await expect(
      withTransaction(ctx(), async (tx) => {
        await creditDeposits(tx, [{ accountId: a, amountMicros: 2_000_000n, reference }]);
        throw new Error('what the credit was for failed');
      }),
    ).rejects.toThrow(/failed/);
    expect(await balanceOf(db, a)).toBe(0n);
    await creditDeposits(ctx(), [{ accountId: a, amountMicros: 2_000_000n, reference }]);
    expect(await balanceOf(db, a)).toBe(2_000_000n);
  });

  it('concurrent batches sharing a reference: one commits, the other writes nothing', async () => {
    const a = await newAccount();
    const b = await newAccount();
    const shared = ref();
    const results = await Promise.allSettled([
      creditDeposits(ctx(), [
        { accountId: a, amountMicros: 1_000_000n, reference: ref() },
        { accountId: b, amountMicros: 2_000_000n, reference: shared },
      ]),
      creditDeposits(ctx(), [
        { accountId: b, amountMicros: 2_000_000n, reference: shared },
        { accountId: a, amountMicros: 3_000_000n, reference: ref() },
      ]),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const failed = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(failed.reason).toBeInstanceOf(DepositAlreadyCreditedError);
    expect(await balanceOf(db, b)).toBe(2_000_000n);
    expect([1_000_000n, 3_000_000n]).toContain(await balanceOf(db, a));
    await expectLedgerReconciles(db);
  });
});
