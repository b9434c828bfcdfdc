import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { createContext } from '../../src/context.js';
import type { Database } from '../../src/db/database.js';
import { AppError } from '../../src/errors.js';
import {
  AlreadyRefundedError,
  adjustBalance,
  chargeAccount,
  creditDeposit,
  refundCharge,
} from '../../src/ledger/ledger.js';
import { systemClock } from '../../src/lib/clock.js';
import { clearSecretBox } from '../../src/webhooks/secret-box.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { balanceOf, expectLedgerReconciles } from '../helpers/ledger.js';

/**
 * Model-based test of the ledger: random sequences of deposits (with reused
 * references), charges, refunds (including repeats) and adjustments run against a pure model and
 * the real database; every reply and every balance must agree, and the ledger must reconcile.
 */

interface Model {
  balances: bigint[];
  deposits: Map<string, { account: number; amount: bigint }>;
  charges: { entryId: bigint; account: number; amount: bigint; refunded: boolean }[];
}

interface Real {
  db: Database;
  accounts: string[];
  run: number;
}

type Cmd = fc.AsyncCommand<Model, Real>;

function outcomeOf(err: unknown): string {
  if (err instanceof AppError) return err.code;
  if (err instanceof AlreadyRefundedError) return 'ALREADY_REFUNDED';
  throw err;
}

async function expectBalances(model: Model, real: Real): Promise<void> {
  for (let i = 0; i < real.accounts.length; i++) {
    expect(await balanceOf(real.db, real.accounts[i] as string)).toBe(model.balances[i]);
  }
}

class Deposit implements Cmd {
  constructor(
    readonly account: number,
    readonly amount: bigint,
    readonly ref: number,
  ) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const reference = `model-${real.run}-${this.ref}`;
    const known = model.deposits.get(reference);
    let got: string;
    try {
      const r = await creditDeposit(createContext(real.db, systemClock), {
        accountId: real.accounts[this.account] as string,
        amountMicros: this.amount,
        reference,
      });
      got = r.duplicate ? 'DUPLICATE' : 'OK';
    } catch (err) {
      got = outcomeOf(err);
    }
    let expected: string;
    if (!known) {
      expected = 'OK';
      model.deposits.set(reference, { account: this.account, amount: this.amount });
      model.balances[this.account] = (model.balances[this.account] as bigint) + this.amount;
    } else {
      expected =
        known.account === this.account && known.amount === this.amount ? 'DUPLICATE' : 'VALIDATION_ERROR';
    }
    expect(got).toBe(expected);
    await expectBalances(model, real);
  }
  toString = () => `deposit(${this.account}, ${this.amount}, ref${this.ref})`;
}

class Charge implements Cmd {
  constructor(
    readonly account: number,
    readonly amount: bigint,
  ) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const outcome = await chargeAccount(real.db, {
      accountId: real.accounts[this.account] as string,
      amountMicros: this.amount,
      operation: 'model',
    });
    const balance = model.balances[this.account] as bigint;
    expect(outcome.ok).toBe(balance >= this.amount);
    if (outcome.ok) {
      model.balances[this.account] = balance - this.amount;
      expect(outcome.balanceMicros).toBe(model.balances[this.account]);
      model.charges.push({
        entryId: outcome.entryId,
        account: this.account,
        amount: this.amount,
        refunded: false,
      });
    }
    await expectBalances(model, real);
  }
  toString = () => `charge(${this.account}, ${this.amount})`;
}

class Refund implements Cmd {
  constructor(readonly pick: number) {}
  check = (model: Readonly<Model>) => model.charges.length > 0;
  async run(model: Model, real: Real): Promise<void> {
    const charge = model.charges[this.pick % model.charges.length] as Model['charges'][number];
    let got: string;
    try {
      const r = await refundCharge(real.db, { chargeEntryId: charge.entryId });
      expect(r.amountMicros).toBe(charge.amount);
      got = 'OK';
    } catch (err) {
      got = outcomeOf(err);
    }
    expect(got).toBe(charge.refunded ? 'ALREADY_REFUNDED' : 'OK');
    if (!charge.refunded) {
      charge.refunded = true;
      model.balances[charge.account] = (model.balances[charge.account] as bigint) + charge.amount;
    }
    await expectBalances(model, real);
  }
  toString = () => `refund(#${this.pick})`;
}

class Adjust implements Cmd {
  constructor(
    readonly account: number,
    readonly amount: bigint,
  ) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    let got: string;
    try {
      await adjustBalance(createContext(real.db, systemClock), {
        accountId: real.accounts[this.account] as string,
        amountMicros: this.amount,
        memo: 'model',
      });
      got = 'OK';
    } catch (err) {
      got = outcomeOf(err);
    }
    const balance = model.balances[this.account] as bigint;
    const expected = balance + this.amount >= 0n ? 'OK' : 'INSUFFICIENT_BALANCE';
    expect(got).toBe(expected);
    if (expected === 'OK') model.balances[this.account] = balance + this.amount;
    await expectBalances(model, real);
  }
  toString = () => `adjust(${this.account}, ${this.amount})`;
}

const ACCOUNTS = 2;
const account = fc.integer({ min: 0, max: ACCOUNTS - 1 });
const amount = fc.bigInt({ min: 1n, max: 3_000_000n });
const commands = [
  fc.tuple(account, amount, fc.integer({ min: 0, max: 5 })).map(([a, m, r]) => new Deposit(a, m, r)),
  fc.tuple(account, amount).map(([a, m]) => new Charge(a, m)),
  fc.tuple(account, amount).map(([a, m]) => new Charge(a, m)),
  fc.nat().map((n) => new Refund(n)),
  fc
    .tuple(
      account,
      fc.bigInt({ min: -2_000_000n, max: 2_000_000n }).filter((n) => n !== 0n),
    )
    .map(([a, m]) => new Adjust(a, m)),
];

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});

describe('ledger model', () => {
  it('agrees with a pure model over random command sequences, and reconciles', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 40 }), async (cmds) => {
        run += 1;
        const accounts: string[] = [];
        for (let i = 0; i < ACCOUNTS; i++) {
          accounts.push(
            (await createAccount(createContext(database.db, systemClock), { mode: 'live' }, clearSecretBox))
              .id,
          );
        }
        const model: Model = { balances: accounts.map(() => 0n), deposits: new Map(), charges: [] };
        await fc.asyncModelRun(() => ({ model, real: { db: database.db, accounts, run } }), cmds);
      }),
      { numRuns: 150 },
    );
    await expectLedgerReconciles(database.db);
  });
});
