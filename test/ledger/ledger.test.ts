import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { createContext, withTransaction } from '../../src/context.js';
import type { Database } from '../../src/db/database.js';
import { AppError } from '../../src/errors.js';
import {
  AlreadyRefundedError,
  adjustBalance,
  chargeAccount,
  creditDeposit,
  reconcileLedger,
  refundCharge,
} from '../../src/ledger/ledger.js';
import { systemClock } from '../../src/lib/clock.js';
import { clearSecretBox } from '../../src/webhooks/secret-box.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';

const USD = 1_000_000n;
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

async function newAccount(balance = 0n): Promise<string> {
  const account = await createAccount(createContext(db, systemClock), { mode: 'live' }, clearSecretBox);
  if (balance > 0n) {
    await creditDeposit(createContext(db, systemClock), {
      accountId: account.id,
      amountMicros: balance,
      reference: `seed-${account.id}`,
    });
  }
  return account.id;
}

async function expectAppError(promise: Promise<unknown>, code: string): Promise<void> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  expect((err as AppError).code).toBe(code);
}

describe('deposits', () => {
  it('credits once per external reference', async () => {
    const id = await newAccount();
    const first = await creditDeposit(createContext(db, systemClock), {
      accountId: id,
      amountMicros: 5n * USD,
      reference: 'sig-1',
    });
    expect(first).toMatchObject({ balanceMicros: 5n * USD, duplicate: false });
    const again = await creditDeposit(createContext(db, systemClock), {
      accountId: id,
      amountMicros: 5n * USD,
      reference: 'sig-1',
    });
    expect(again).toEqual({ entryId: first.entryId, balanceMicros: 5n * USD, duplicate: true });
    expect(await balanceOf(db, id)).toBe(5n * USD);
    expect(await countEntries(db, id, 'deposit')).toBe(1);
  });

  it("answers a repeated reference inside a caller's transaction, which then still commits", async () => {
    // The operator's assign and the dashboard's first sign-in credit inside their own transaction: a
    // duplicate there must not leave the transaction aborted by the unique violation.
    const id = await newAccount();
    const input = { accountId: id, amountMicros: 2n * USD, reference: 'sig-in-tx' };
    await creditDeposit(createContext(db, systemClock), input);
    const again = await withTransaction(createContext(db, systemClock), async (tx) => {
      const outcome = await creditDeposit(tx, input);
      await creditDeposit(tx, { ...input, reference: 'sig-in-tx-2' });
      return outcome;
    });
    expect(again.duplicate).toBe(true);
    expect(await balanceOf(db, id)).toBe(4n * USD);
    expect(await countEntries(db, id, 'deposit')).toBe(2);
  });

  it('refuses a reference reused with another amount or account', async () => {
    const a = await newAccount();
    const b = await newAccount();
    await creditDeposit(createContext(db, systemClock), {
      accountId: a,
      amountMicros: USD,
      reference: 'sig-2',
    });
    await expectAppError(
      creditDeposit(createContext(db, systemClock), {
        accountId: a,
        amountMicros: 2n * USD,
        reference: 'sig-2',
      }),
      'VALIDATION_ERROR',
    );
    await expectAppError(
      creditDeposit(createContext(db, systemClock), { accountId: b, amountMicros: USD, reference: 'sig-2' }),
      'VALIDATION_ERROR',
    );
    expect(await balanceOf(db, a)).toBe(USD);
    expect(await balanceOf(db, b)).toBe(0n);
  });

  it('refuses unknown accounts and non-positive amounts', async () => {
    await expectAppError(
      creditDeposit(createContext(db, systemClock), {
        accountId: 'acct_nope',
        amountMicros: USD,
        reference: 'sig-3',
      }),
      'ACCOUNT_NOT_FOUND',
    );
    const id = await newAccount();
    await expectAppError(
      creditDeposit(createContext(db, systemClock), { accountId: id, amountMicros: 0n, reference: 'sig-4' }),
      'VALIDATION_ERROR',
    );
    await expectAppError(
      creditDeposit(createContext(db, systemClock), {
        accountId: id,
        amountMicros: -USD,
        reference: 'sig-5',
      }),
      'VALIDATION_ERROR',
    );
    await expectAppError(
      creditDeposit(createContext(db, systemClock), { accountId: id, amountMicros: USD, reference: ' ' }),
      'VALIDATION_ERROR',
    );
  });

  it('credits a reference exactly once when the same deposit arrives 20 times at once', async () => {
    const id = await newAccount();
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        creditDeposit(createContext(db, systemClock), {
          accountId: id,
          amountMicros: 3n * USD,
          reference: 'sig-race',
        }),
      ),
    );
    expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
    expect(await balanceOf(db, id)).toBe(3n * USD);
    expect(await countEntries(db, id, 'deposit')).toBe(1);
  });
});

describe('charges', () => {
  it('charges what the balance covers, to exactly zero, and not a micro-dollar more', async () => {
    const id = await newAccount(3n * CENT);
    expect(
      await chargeAccount(db, { accountId: id, amountMicros: 2n * CENT, operation: 'test' }),
    ).toMatchObject({
      ok: true,
      balanceMicros: CENT,
    });
    expect(await chargeAccount(db, { accountId: id, amountMicros: CENT + 1n, operation: 'test' })).toEqual({
      ok: false,
      reason: 'INSUFFICIENT_BALANCE',
    });
    expect(await chargeAccount(db, { accountId: id, amountMicros: CENT, operation: 'test' })).toMatchObject({
      ok: true,
      balanceMicros: 0n,
    });
    expect(await balanceOf(db, id)).toBe(0n);
    expect(await countEntries(db, id, 'charge')).toBe(2);
  });

  it('records what was charged, for which request and key', async () => {
    const id = await newAccount(USD);
    const outcome = await chargeAccount(db, {
      accountId: id,
      amountMicros: CENT,
      operation: 'price.single',
      requestId: 'req_1',
      keyId: 'key_1',
    });
    if (!outcome.ok) throw new Error('charge failed');
    const [entry] = await db.query('SELECT * FROM ledger_entries WHERE id = $1', [outcome.entryId]);
    expect(entry).toMatchObject({
      account_id: id,
      kind: 'charge',
      amount_micros: -CENT,
      balance_after_micros: USD - CENT,
      operation: 'price.single',
      request_id: 'req_1',
      key_id: 'key_1',
    });
  });

  it('lets exactly 100 of 500 concurrent 0.01 charges through a 1.00 balance', async () => {
    const id = await newAccount(USD);
    const outcomes = await Promise.all(
      Array.from({ length: 500 }, (_, i) =>
        chargeAccount(db, { accountId: id, amountMicros: CENT, operation: 'test', requestId: `req_${i}` }),
      ),
    );
    expect(outcomes.filter((o) => o.ok)).toHaveLength(100);
    expect(outcomes.filter((o) => !o.ok)).toHaveLength(400);
    expect(await balanceOf(db, id)).toBe(0n);
    expect(await countEntries(db, id, 'charge')).toBe(100);
    // Every successful charge saw a distinct running balance: no two were applied to the same state.
    const balances = outcomes.flatMap((o) => (o.ok ? [o.balanceMicros] : []));
    expect(new Set(balances).size).toBe(100);
    await expectLedgerReconciles(db);
  });
});

describe('refunds', () => {
  it('gives a charge back exactly once', async () => {
    const id = await newAccount(USD);
    const charge = await chargeAccount(db, {
      accountId: id,
      amountMicros: 25n * CENT,
      operation: 'ai.resolve',
    });
    if (!charge.ok) throw new Error('charge failed');
    const refund = await refundCharge(db, {
      chargeEntryId: charge.entryId,
      accountId: id,
      memo: 'job failed',
    });
    expect(refund).toMatchObject({ amountMicros: 25n * CENT, balanceMicros: USD });
    await expect(refundCharge(db, { chargeEntryId: charge.entryId })).rejects.toBeInstanceOf(
      AlreadyRefundedError,
    );
    expect(await balanceOf(db, id)).toBe(USD);
  });

  it('refunds exactly once when 20 refunds of one charge race', async () => {
    const id = await newAccount(USD);
    const charge = await chargeAccount(db, {
      accountId: id,
      amountMicros: 50n * CENT,
      operation: 'ai.schedule',
    });
    if (!charge.ok) throw new Error('charge failed');
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () => refundCharge(db, { chargeEntryId: charge.entryId })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) {
      if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(AlreadyRefundedError);
    }
    expect(await balanceOf(db, id)).toBe(USD);
  });

  it('refunds only charges, and only of the given account', async () => {
    const a = await newAccount(USD);
    const b = await newAccount(USD);
    const charge = await chargeAccount(db, { accountId: a, amountMicros: CENT, operation: 'test' });
    if (!charge.ok) throw new Error('charge failed');
    await expectAppError(refundCharge(db, { chargeEntryId: charge.entryId, accountId: b }), 'NOT_FOUND');
    const [deposit] = await db.query<{ id: bigint }>(
      `SELECT id FROM ledger_entries WHERE account_id = $1 AND kind = 'deposit'`,
      [a],
    );
    await expectAppError(refundCharge(db, { chargeEntryId: (deposit as { id: bigint }).id }), 'NOT_FOUND');
    expect(await balanceOf(db, b)).toBe(USD);
  });
});

describe('adjustments', () => {
  it('corrects in both directions but never below zero', async () => {
    const id = await newAccount(USD);
    expect(
      await adjustBalance(createContext(db, systemClock), {
        accountId: id,
        amountMicros: -40n * CENT,
        memo: 'correction',
      }),
    ).toMatchObject({
      balanceMicros: 60n * CENT,
    });
    await expectAppError(
      adjustBalance(createContext(db, systemClock), {
        accountId: id,
        amountMicros: -61n * CENT,
        memo: 'too much',
      }),
      'INSUFFICIENT_BALANCE',
    );
    await expectAppError(
      adjustBalance(createContext(db, systemClock), {
        accountId: 'acct_nope',
        amountMicros: CENT,
        memo: 'x',
      }),
      'ACCOUNT_NOT_FOUND',
    );
    expect(
      await adjustBalance(createContext(db, systemClock), {
        accountId: id,
        amountMicros: 5n * CENT,
        memo: 'goodwill',
      }),
    ).toMatchObject({
      balanceMicros: 65n * CENT,
    });
  });
});

describe('the database itself enforces the invariants', () => {
  it('refuses a negative balance even from a direct write', async () => {
    const id = await newAccount(CENT);
    await expect(
      db.query('UPDATE accounts SET balance_micros = -1 WHERE id = $1', [id]),
    ).rejects.toMatchObject({
      code: '23514',
    });
  });

  it('refuses to update, delete or truncate ledger entries', async () => {
    const id = await newAccount(CENT);
    await expect(
      db.query('UPDATE ledger_entries SET amount_micros = 1 WHERE account_id = $1', [id]),
    ).rejects.toThrow(/append-only/);
    await expect(db.query('DELETE FROM ledger_entries WHERE account_id = $1', [id])).rejects.toThrow(
      /append-only/,
    );
    await expect(db.query('TRUNCATE ledger_entries CASCADE')).rejects.toThrow(/append-only/);
  });

  it('refuses entries of unknown accounts and refunds of anything but a charge of the same account', async () => {
    const a = await newAccount(USD);
    const b = await newAccount(USD);
    const charge = await chargeAccount(db, { accountId: a, amountMicros: CENT, operation: 'test' });
    if (!charge.ok) throw new Error('the charge should succeed');
    const [deposit] = await db.query<{ id: bigint }>(
      `SELECT id FROM ledger_entries WHERE account_id = $1 AND kind = 'deposit'`,
      [a],
    );
    const insert = (account: string, refundOf: bigint | null) =>
      db.query(
        `INSERT INTO ledger_entries (account_id, kind, amount_micros, balance_after_micros, refund_of, operation)
         VALUES ($1, $2, $3, 1, $4, 'test')`,
        [account, refundOf === null ? 'charge' : 'refund', refundOf === null ? -1 : 1, refundOf],
      );
    const violation = { code: '23503' };
    await expect(insert('acct_unknown', null)).rejects.toMatchObject(violation);
    await expect(insert(a, deposit?.id ?? 0n)).rejects.toMatchObject(violation); // not a charge
    await expect(insert(b, charge.entryId)).rejects.toMatchObject(violation); // another account's charge
    await expect(insert(a, 10n ** 15n)).rejects.toMatchObject(violation); // no such entry
    // One bad row among good ones refuses the whole statement.
    await expect(
      db.query(
        `INSERT INTO ledger_entries (account_id, kind, amount_micros, balance_after_micros, operation)
         SELECT unnest($1::text[]), 'charge', -1, 1, 'test'`,
        [[a, b, 'acct_unknown']],
      ),
    ).rejects.toMatchObject(violation);
    expect(await countEntries(db, a, 'charge')).toBe(1);
    expect(await countEntries(db, b, 'charge')).toBe(0);
  });

  it('never deletes an account, so no entry loses its account', async () => {
    const id = await newAccount(CENT);
    await expect(db.query('DELETE FROM accounts WHERE id = $1', [id])).rejects.toThrow(/never deleted/);
    await expect(db.query('TRUNCATE accounts CASCADE')).rejects.toThrow(/never deleted|append-only/);
    expect(await balanceOf(db, id)).toBe(CENT);
  });

  it('reconciliation notices a balance changed behind the ledger’s back', async () => {
    const id = await newAccount(USD);
    await db.query('UPDATE accounts SET balance_micros = balance_micros + 1 WHERE id = $1', [id]);
    const report = await reconcileLedger(db);
    expect(report.ok).toBe(false);
    expect(report.balanceMismatches).toEqual([
      { accountId: id, balanceMicros: USD + 1n, ledgerTotalMicros: USD },
    ]);
    // Put it back through the ledger so the file ends reconciled.
    await db.query('UPDATE accounts SET balance_micros = balance_micros - 1 WHERE id = $1', [id]);
  });
});
