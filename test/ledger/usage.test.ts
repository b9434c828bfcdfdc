import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refundCharge } from '../../src/ledger/ledger.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { balanceOf, expectLedgerReconciles } from '../helpers/ledger.js';

/** GET /account/usage: billed requests and spend from the ledger, per day, operation or key. */

let ctx: TestContext;
let account: TestAccount;
let second: { key: string; id: string };
const DAY = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
let today: number;

/** A charge written as if made at `at` (the ledger's own times are the database's). */
async function chargeAt(operation: string, micros: bigint, keyId: string, at: Date): Promise<bigint> {
  const [row] = await ctx.database.db.query<{ id: bigint }>(
    `WITH a AS (UPDATE accounts SET balance_micros = balance_micros - $2 WHERE id = $1 RETURNING id, balance_micros)
     INSERT INTO ledger_entries (account_id, kind, amount_micros, balance_after_micros, operation, key_id, request_id, created_at)
     SELECT id, 'charge', -$2::bigint, balance_micros, $3, $4, 'req_backdated', $5 FROM a RETURNING id`,
    [account.accountId, micros, operation, keyId, at],
  );
  return (row as { id: bigint }).id;
}

beforeAll(async () => {
  // The day the cases call today is fixed before anything is stamped (see the clamp below).
  today = Math.floor(Date.now() / DAY) * DAY;
  ctx = await createTestContext();
  // The ledger stamps entries with the database's clock; the report's default end is the service's.
  ctx.clock.advance(60_000);
  account = await ctx.createAccount({ balanceUsd: '10.00' });
  const issued = await ctx.addKey(account.accountId);
  await ctx.database.db.query('UPDATE api_keys SET name = $2 WHERE id = $1', [issued.record.id, 'batch bot']);
  second = { key: issued.key, id: issued.record.id };
  for (let i = 0; i < 3; i++) {
    expect((await ctx.request(account.key, { method: 'GET', url: '/api/v1/price/SOL' })).statusCode).toBe(
      200,
    );
  }
  const batch = await ctx.request(second.key, {
    method: 'POST',
    url: '/api/v1/price/batch',
    payload: { symbols: ['SOL', 'JUP'] },
  });
  expect(batch.statusCode).toBe(200);
  await chargeAt('getPrice', 10_000n, account.keyId, new Date(today - 2 * DAY + 3_600_000));
  const job = await chargeAt('schedulePriceCheck', 50_000n, second.id, new Date(today - DAY + 3_600_000));
  await refundCharge(ctx.database.db, {
    chargeEntryId: job,
    accountId: account.accountId,
    memo: 'test refund',
  });
  // A setup that ran across UTC midnight would put some of the database-stamped entries on the next
  // day: keep them on the day the cases expect, so the file passes at any hour.
  await ctx.database.db.query(
    'UPDATE ledger_entries SET created_at = $2 WHERE account_id = $1 AND created_at >= $2',
    [account.accountId, new Date(today + DAY - 1)],
  );
  // Another account's spend is never counted.
  const other = await ctx.createAccount({ balanceUsd: '1.00' });
  await ctx.request(other.key, { method: 'GET', url: '/api/v1/price/SOL' });
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

const usage = async (query: string, key = account.key) => {
  const response = await ctx.request(key, { method: 'GET', url: `/api/v1/account/usage${query}` });
  return { status: response.statusCode, body: response.json() };
};

describe('GET /account/usage', () => {
  it('per day: every day of the range, refunds on their own day, totals', async () => {
    const range = `?from=${dayOf(today - 3 * DAY)}&to=${dayOf(today + DAY)}`;
    const { status, body } = await usage(`${range}&groupBy=day`);
    expect(status).toBe(200);
    const zero = { requests: 0, chargedUsd: '0.00', refundedUsd: '0.00', spendUsd: '0.00' };
    expect(body).toEqual({
      requestId: expect.stringMatching(/^req_/),
      from: new Date(today - 3 * DAY).toISOString(),
      to: new Date(today + DAY).toISOString(),
      groupBy: 'day',
      totals: { requests: 6, chargedUsd: '0.16', refundedUsd: '0.05', spendUsd: '0.11' },
      rows: [
        { group: dayOf(today - 3 * DAY), label: null, ...zero },
        {
          group: dayOf(today - 2 * DAY),
          label: null,
          requests: 1,
          chargedUsd: '0.01',
          refundedUsd: '0.00',
          spendUsd: '0.01',
        },
        {
          group: dayOf(today - DAY),
          label: null,
          requests: 1,
          chargedUsd: '0.05',
          refundedUsd: '0.00',
          spendUsd: '0.05',
        },
        // Three prices (0.03) and a two-symbol batch (0.07); the job's refund lands today.
        {
          group: dayOf(today),
          label: null,
          requests: 4,
          chargedUsd: '0.10',
          refundedUsd: '0.05',
          spendUsd: '0.05',
        },
      ],
    });
  });

  it('per operation and per key (with its name): largest spend first, refunds against their charge', async () => {
    const range = `?from=${dayOf(today - 3 * DAY)}&to=${dayOf(today + DAY)}`;
    const byOperation = (await usage(`${range}&groupBy=operation`)).body;
    expect(byOperation.rows).toEqual([
      {
        group: 'getPriceBatch',
        label: null,
        requests: 1,
        chargedUsd: '0.07',
        refundedUsd: '0.00',
        spendUsd: '0.07',
      },
      {
        group: 'getPrice',
        label: null,
        requests: 4,
        chargedUsd: '0.04',
        refundedUsd: '0.00',
        spendUsd: '0.04',
      },
      {
        group: 'schedulePriceCheck',
        label: null,
        requests: 1,
        chargedUsd: '0.05',
        refundedUsd: '0.05',
        spendUsd: '0.00',
      },
    ]);
    const byKey = (await usage(`${range}&groupBy=key`)).body;
    expect(byKey.rows).toEqual([
      {
        group: second.id,
        label: 'batch bot',
        requests: 2,
        chargedUsd: '0.12',
        refundedUsd: '0.05',
        spendUsd: '0.07',
      },
      {
        group: account.keyId,
        label: 'test key',
        requests: 4,
        chargedUsd: '0.04',
        refundedUsd: '0.00',
        spendUsd: '0.04',
      },
    ]);
    expect(byKey.totals).toEqual(byOperation.totals);
  });

  it('takes timestamps too; by default the last 30 days, today included; it is free', async () => {
    const before = await balanceOf(ctx.database.db, account.accountId);
    const defaults = (await usage('')).body;
    expect(defaults.groupBy).toBe('day');
    expect(defaults.rows).toHaveLength(30);
    expect(defaults.rows.at(-1).group).toBe(dayOf(ctx.clock.now().getTime()));
    expect(defaults.to).toBe(ctx.clock.now().toISOString());
    expect(defaults.totals.requests).toBe(6);
    const half = (
      await usage(
        `?from=${new Date(today - DAY).toISOString()}&to=${new Date(today - DAY / 2).toISOString()}`,
      )
    ).body;
    expect(half.rows).toEqual([
      {
        group: dayOf(today - DAY),
        label: null,
        requests: 1,
        chargedUsd: '0.05',
        refundedUsd: '0.00',
        spendUsd: '0.05',
      },
    ]);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(before);
  });

  it('refuses a bad range with VALIDATION_ERROR naming the field', async () => {
    const cases: [string, string][] = [
      ['?from=yesterday', 'query.from'],
      ['?to=2026-13-01', 'query.to'],
      ['?from=2026-11-02&to=2026-11-01', 'query.from'],
      ['?from=2026-11-01&to=2026-11-01', 'query.from'],
      ['?from=2025-01-01&to=2026-11-01', 'query.from'],
      ['?groupBy=hour', 'query.groupBy'],
      ['?limit=3', 'query.limit'],
    ];
    for (const [query, path] of cases) {
      const { status, body } = await usage(query);
      expect(status, query).toBe(400);
      expect(body.code).toBe('VALIDATION_ERROR');
      expect(
        body.details.problems.map((p: { path: string }) => p.path),
        query,
      ).toContain(path);
    }
  });

  it('needs the account permission', async () => {
    const narrow = await ctx.addKey(account.accountId, ['price']);
    const { status, body } = await usage('', narrow.key);
    expect(status).toBe(403);
    expect(body.code).toBe('PERMISSION_DENIED');
  });
});
