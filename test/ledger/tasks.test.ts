import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { loadConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';
import { creditDeposit } from '../../src/ledger/ledger.js';
import { ledgerTasks } from '../../src/ledger/tasks.js';
import { systemClock } from '../../src/lib/clock.js';
import type { Log } from '../../src/logger.js';
import { registry } from '../../src/metrics/metrics.js';
import { clearSecretBox } from '../../src/webhooks/secret-box.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/**
 * The worker's periodic reconciliation: a mismatch is an incident, logged at error level and shown
 * by `sibyl_ledger_reconciles` (deploy/prometheus/alerts.yml alerts on it).
 */

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});

async function gauge(name: string): Promise<number | undefined> {
  const metric = registry.getSingleMetric(name);
  return (await (metric as NonNullable<typeof metric>).get()).values[0]?.value;
}

describe('the reconciliation task', () => {
  it('sets sibyl_ledger_reconciles to 1, then to 0 and logs an error when a balance moved behind the ledger', async () => {
    const db = database.db;
    const errors: string[] = [];
    const log: Log = {
      info() {},
      warn() {},
      error(_fields, message) {
        errors.push(message);
      },
    };
    const [task] = ledgerTasks({ db, log, config: loadConfig({}).ledger });
    const ctx = createContext(db, systemClock);
    const account = await createAccount(ctx, { mode: 'live' }, clearSecretBox);
    await creditDeposit(ctx, { accountId: account.id, amountMicros: 5_000_000n, reference: 'tasks-seed' });

    const before = Date.now() / 1000;
    await task?.run(new Date(), new AbortController().signal);
    expect(await gauge('sibyl_ledger_reconciles')).toBe(1);
    expect(await gauge('sibyl_ledger_reconciled_timestamp_seconds')).toBeGreaterThanOrEqual(
      Math.floor(before),
    );
    expect(errors).toEqual([]);

    await db.query('UPDATE accounts SET balance_micros = balance_micros + 1 WHERE id = $1', [account.id]);
    await task?.run(new Date(), new AbortController().signal);
    expect(await gauge('sibyl_ledger_reconciles')).toBe(0);
    expect(errors).toEqual(['LEDGER DOES NOT RECONCILE']);

    await db.query('UPDATE accounts SET balance_micros = balance_micros - 1 WHERE id = $1', [account.id]);
    await task?.run(new Date(), new AbortController().signal);
    expect(await gauge('sibyl_ledger_reconciles')).toBe(1);
  });
});
