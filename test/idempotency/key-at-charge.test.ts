import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { createContext } from '../../src/context.js';
import type { Database } from '../../src/db/database.js';
import { fingerprint } from '../../src/idempotency/idempotency.js';
import { answerAwaitingBalance } from '../../src/idempotency/pending-answer.js';
import { directBiller } from '../../src/ledger/biller.js';
import { CoalescingBiller } from '../../src/ledger/coalescing-biller.js';
import { creditDeposit } from '../../src/ledger/ledger.js';
import { usdText } from '../../src/ledger/sql.js';
import { systemClock } from '../../src/lib/clock.js';
import { formatUsd } from '../../src/lib/money.js';
import { clearSecretBox } from '../../src/webhooks/secret-box.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';
import { probeRoutes } from '../helpers/probe-routes.js';

/**
 * A route billed after its handler (the batch price) takes its Idempotency-Key with its charge:
 * the answer's row is inserted in the charge's transaction. A key that turns out to be someone
 * else's — an answered request retried, a duplicate in the same batch, a concurrent request of
 * another instance — rolls that transaction back, so the request is never charged, and every other
 * charge of the batch still goes through once.
 */

const CENT = 10_000n;
let ctx: TestContext;
let db: Database;

beforeAll(async () => {
  ctx = await createTestContext({ extraRoutes: probeRoutes });
  db = ctx.database.db;
});
afterAll(async () => {
  await expectLedgerReconciles(db);
  await ctx.close();
});

async function account(balance: bigint): Promise<string> {
  const { id } = await createAccount(createContext(db, systemClock), { mode: 'live' }, clearSecretBox);
  await creditDeposit(createContext(db, systemClock), {
    accountId: id,
    amountMicros: balance,
    reference: `seed-${id}`,
  });
  return id;
}

/** A keyed charge of 0.01 whose answer is `{"requestId":…,"remainingBalanceUsd":…}`. */
function keyed(accountId: string, key: string, requestId: string) {
  return {
    accountId,
    amountMicros: CENT,
    operation: 'test',
    requestId,
    answer: answerAwaitingBalance(
      { idempotencyKey: key, fingerprint: 'print', createdAt: ctx.clock.now() },
      `{"requestId":"${requestId}","remainingBalanceUsd":"`,
    ),
  };
}

async function keyRow(accountId: string, key: string) {
  const rows = await db.query<{ request_id: string; status: string; response_body: string }>(
    'SELECT request_id, status, response_body FROM idempotency_keys WHERE account_id = $1 AND idempotency_key = $2',
    [accountId, key],
  );
  return rows;
}

describe('keys taken with the charge', () => {
  it("the charge statement writes a stored answer's balance exactly as formatUsd does", async () => {
    const values = [0n, 1n, 9n, 10n, 100n, 10_000n, 100_000n, 120_000n, 999_999n, 1_000_000n, 1_500_000n];
    values.push(12_345_678n, 100_000_000_000n, 999_999_999_999n);
    for (let i = 0; i < 200; i++) values.push(BigInt(Math.floor(Math.random() * 10 ** (1 + (i % 12)))));
    const rows = await db.query<{ usd: string }>(
      `SELECT ${usdText('v')} AS usd FROM unnest($1::bigint[]) WITH ORDINALITY AS t(v, n) ORDER BY n`,
      [values],
    );
    expect(rows.map((r) => r.usd)).toEqual(values.map(formatUsd));
  });

  it('a batch with a retried key and a repeated key: those two are not charged, the rest once each', async () => {
    const a = await account(100n * CENT);
    const b = await account(100n * CENT);
    const biller = new CoalescingBiller(db, { maxBatch: 100, maxInFlight: 1 });
    expect((await biller.charge(keyed(a, 'answered', 'req_first'))).ok).toBe(true);

    // The first charge goes alone; the other five queue behind it and make one batch, in which
    // a's 'answered' key is already taken and 'twice' appears twice.
    const outcomes = await Promise.all([
      biller.charge({ accountId: b, amountMicros: CENT, operation: 'test', requestId: 'req_lead' }),
      biller.charge(keyed(a, 'answered', 'req_retry')),
      biller.charge({ accountId: b, amountMicros: CENT, operation: 'test', requestId: 'req_plain' }),
      biller.charge(keyed(a, 'twice', 'req_twice_1')),
      biller.charge(keyed(a, 'twice', 'req_twice_2')),
      biller.charge(keyed(b, 'answered', 'req_b')),
    ]);
    expect(outcomes.map((o) => (o.ok ? 'ok' : o.reason))).toEqual([
      'ok',
      'IDEMPOTENCY_KEY_TAKEN',
      'ok',
      'ok',
      'IDEMPOTENCY_KEY_TAKEN',
      'ok', // keys belong to their account: b's 'answered' is its own
    ]);
    expect(biller.stats.batches).toBe(3);
    expect(await countEntries(db, a, 'charge')).toBe(2);
    expect(await countEntries(db, b, 'charge')).toBe(3);
    expect(await balanceOf(db, a)).toBe(98n * CENT);
    expect((await keyRow(a, 'answered'))[0]?.request_id).toBe('req_first');
    const [twice] = await keyRow(a, 'twice');
    expect(twice?.request_id).toBe('req_twice_1');
    expect(twice?.response_body).toBe('{"requestId":"req_twice_1","remainingBalanceUsd":"0.98"}');
  });

  it('a batch without a taken key is one statement; with one, the others are charged once all the same', async () => {
    const a = await account(100n * CENT);
    const b = await account(100n * CENT);
    const counted = { queries: 0, transactions: 0 };
    const counting: Database = {
      ...db,
      query: (...args: Parameters<Database['query']>) => {
        counted.queries++;
        return db.query(...args);
      },
      transaction: (fn) => {
        counted.transactions++;
        return db.transaction(fn);
      },
    } as Database;
    const biller = new CoalescingBiller(counting, { maxBatch: 100, maxInFlight: 1 });
    const plain = (requestId: string) => ({ accountId: b, amountMicros: CENT, operation: 'test', requestId });
    // A lead charge goes alone; the three behind it make one batch.
    const batchBehindLead = async (lead: string, keys: [string, string][], other: string) => {
      const first = biller.charge(plain(lead));
      const outcomes = await Promise.all([
        ...keys.map(([key, requestId]) => biller.charge(keyed(a, key, requestId))),
        biller.charge(plain(other)),
      ]);
      await first;
      return outcomes;
    };
    const fresh = await batchBehindLead(
      'req_lead2',
      [
        ['one', 'req_one'],
        ['two', 'req_two'],
      ],
      'req_b2',
    );
    expect(fresh.map((o) => o.ok)).toEqual([true, true, true]);
    // The lead's statement, then one for the three (answers without a shared part: no parts).
    expect(counted).toEqual({ queries: 2, transactions: 0 });
    expect((await keyRow(a, 'two'))[0]?.response_body).toBe(
      '{"requestId":"req_two","remainingBalanceUsd":"0.98"}',
    );

    // 'one' again, with a new key and b's charge: the statement fails on the key, charging
    // nothing; the batch is charged again in a transaction without the retry.
    const mixed = await batchBehindLead(
      'req_lead3',
      [
        ['one', 'req_one_again'],
        ['three', 'req_three'],
      ],
      'req_b3',
    );
    expect(mixed.map((o) => (o.ok ? 'ok' : o.reason))).toEqual(['IDEMPOTENCY_KEY_TAKEN', 'ok', 'ok']);
    expect(counted.transactions).toBe(2); // rolled back on the key, then without it
    expect(await countEntries(db, a, 'charge')).toBe(3);
    expect(await countEntries(db, b, 'charge')).toBe(4);
    expect((await keyRow(a, 'one'))[0]?.request_id).toBe('req_one');
  });

  it('a charge of its own (quotas, or no coalescing) with a taken key is not charged either', async () => {
    const a = await account(100n * CENT);
    const biller = directBiller(db);
    const first = await biller.charge(keyed(a, 'alone', 'req_alone_1'));
    const retry = await biller.charge(keyed(a, 'alone', 'req_alone_2'));
    expect(first).toMatchObject({ ok: true, balanceMicros: 99n * CENT });
    expect(retry).toEqual({ ok: false, reason: 'IDEMPOTENCY_KEY_TAKEN' });
    expect(await countEntries(db, a, 'charge')).toBe(1);
    expect(await keyRow(a, 'alone')).toMatchObject([
      {
        request_id: 'req_alone_1',
        status: 'done',
        response_body: '{"requestId":"req_alone_1","remainingBalanceUsd":"0.99"}',
      },
    ]);
  });

  it('two instances charging the same key at once: one charge, the other told the key is taken', async () => {
    const a = await account(100n * CENT);
    const one = new CoalescingBiller(db, { maxBatch: 100, maxInFlight: 2 });
    const two = new CoalescingBiller(db, { maxBatch: 100, maxInFlight: 2 });
    for (let round = 0; round < 10; round++) {
      const key = `race-${round}`;
      const outcomes = await Promise.all([
        one.charge(keyed(a, key, `req_${round}_one`)),
        two.charge(keyed(a, key, `req_${round}_two`)),
      ]);
      expect(outcomes.filter((o) => o.ok)).toHaveLength(1);
      expect(outcomes.filter((o) => !o.ok)).toEqual([{ ok: false, reason: 'IDEMPOTENCY_KEY_TAKEN' }]);
    }
    expect(await countEntries(db, a, 'charge')).toBe(10);
    expect(await balanceOf(db, a)).toBe(90n * CENT);
  });

  it('over HTTP: 50 concurrent requests with one key, one charge, the others replay it or wait (409)', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const responses = await Promise.all(
      Array.from({ length: 50 }, () =>
        ctx.request(account.key, {
          method: 'POST',
          url: '/api/v1/test/billed',
          payload: {},
          headers: { 'idempotency-key': 'burst-at-charge' },
        }),
      ),
    );
    const fresh = responses.filter((r) => r.statusCode === 200 && !r.headers['idempotent-replayed']);
    const replays = responses.filter((r) => r.headers['idempotent-replayed'] === 'true');
    const busy = responses.filter((r) => r.statusCode === 409);
    expect(fresh).toHaveLength(1);
    expect(replays.length + busy.length).toBe(49);
    for (const replay of replays) {
      expect(replay.statusCode).toBe(200);
      expect(replay.body).toBe(fresh[0]?.body);
      expect(replay.headers['x-request-id']).toBe(fresh[0]?.headers['x-request-id']);
    }
    expect(await countEntries(db, account.accountId, 'charge')).toBe(1);
    expect(await balanceOf(db, account.accountId)).toBe(99n * CENT);
  });

  it('over HTTP: a retry whose first attempt is still running elsewhere waits (409); its takeover once lapsed', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const print = fingerprint('POST', '/api/v1/test/billed', {});
    const now = ctx.clock.now();
    await db.query(
      `INSERT INTO idempotency_keys (account_id, idempotency_key, fingerprint, request_id, status, locked_until, created_at)
       VALUES ($1, 'held', $2, 'req_held', 'running', $3, $4)`,
      [account.accountId, print, new Date(now.getTime() + 5_000), now],
    );
    const send = () =>
      ctx.request(account.key, {
        method: 'POST',
        url: '/api/v1/test/billed',
        payload: {},
        headers: { 'idempotency-key': 'held' },
      });
    const busy = await send();
    expect(busy.statusCode).toBe(409);
    expect(busy.json()).toMatchObject({
      code: 'IDEMPOTENCY_KEY_IN_USE',
      details: { lockExpiresInSeconds: 5 },
    });
    expect(await countEntries(db, account.accountId, 'charge')).toBe(0);
    ctx.clock.advance(5_000);
    const taken = await send();
    expect(taken.statusCode).toBe(200);
    expect(taken.headers['idempotent-replayed']).toBeUndefined();
    const again = await send();
    expect(again.body).toBe(taken.body);
    expect(await countEntries(db, account.accountId, 'charge')).toBe(1);
    // The key keeps the day it was first taken.
    const [row] = await db.query<{ created_at: Date }>(
      'SELECT created_at FROM idempotency_keys WHERE account_id = $1 AND idempotency_key = $2',
      [account.accountId, 'held'],
    );
    expect(row?.created_at.getTime()).toBe(now.getTime());
  });
});
