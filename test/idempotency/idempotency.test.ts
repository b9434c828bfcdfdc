import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLog } from '../../src/logger.js';
import { createRetention } from '../../src/retention/retention.js';
import { prunedTables } from '../../src/worker/worker.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';
import { PROBE_TABLE, probeRoutes, transactionalProbeRoutes } from '../helpers/probe-routes.js';

/**
 * Idempotency keys: a retry of a paid request with the same key gets the stored answer, byte for
 * byte, and is not charged again; a different request with the key is refused; failures are not
 * stored.
 */

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext({
    extraRoutes: (app) => {
      probeRoutes(app);
      transactionalProbeRoutes(app);
    },
  });
  await ctx.database.db.exec(PROBE_TABLE);
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

function post(account: TestAccount, url: string, payload: object, key?: string) {
  return ctx.request(account.key, {
    method: 'POST',
    url: `/api/v1${url}`,
    payload,
    headers: key === undefined ? {} : { 'idempotency-key': key },
  });
}

async function storedKeys(accountId: string): Promise<number> {
  const [row] = await ctx.database.db.query<{ n: bigint }>(
    'SELECT count(*) AS n FROM idempotency_keys WHERE account_id = $1',
    [accountId],
  );
  return Number(row?.n ?? 0);
}

describe('Idempotency-Key', () => {
  it('a retry gets the stored answer byte for byte, marked as replayed, and is not charged', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const first = await post(account, '/test/billed', { outcome: 'ok' }, 'order-1');
    expect(first.statusCode).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const retry = await post(account, '/test/billed', { outcome: 'ok' }, 'order-1');
    expect(retry.statusCode).toBe(200);
    expect(retry.body).toBe(first.body);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.headers['x-request-id']).toBe(first.headers['x-request-id']);
    expect(retry.json()).toEqual({
      requestId: first.headers['x-request-id'],
      ok: true,
      costUsd: '0.01',
      remainingBalanceUsd: '0.99',
    });
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(1);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(990_000n);
  });

  it('the same request with its keys in another order is the same request', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const first = await ctx.request(account.key, {
      method: 'POST',
      url: '/api/v1/price/batch',
      payload: '{"symbols":["SOL","BTC"]}',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'batch-1' },
    });
    expect(first.statusCode).toBe(200);
    const retry = await ctx.request(account.key, {
      method: 'POST',
      url: '/api/v1/price/batch',
      payload: '{ "symbols" : ["SOL", "BTC"] }',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'batch-1' },
    });
    expect(retry.statusCode).toBe(200);
    expect(retry.body).toBe(first.body);
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(1);
  });

  it('the key with a different request → 422 IDEMPOTENCY_KEY_REUSED, not charged', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    expect((await post(account, '/price/batch', { symbols: ['SOL'] }, 'k-1')).statusCode).toBe(200);
    const otherBody = await post(account, '/price/batch', { symbols: ['ETH'] }, 'k-1');
    expect(otherBody.statusCode).toBe(422);
    expect(otherBody.json()).toEqual({
      error: 'This Idempotency-Key was used for a different request; use a new key for a new request',
      code: 'IDEMPOTENCY_KEY_REUSED',
      details: { idempotencyKey: 'k-1' },
      requestId: otherBody.headers['x-request-id'],
    });
    const otherPath = await post(account, '/test/billed', {}, 'k-1');
    expect(otherPath.statusCode).toBe(422);
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(1);
  });

  it('50 concurrent requests with one key: exactly one charge; the others replay or wait (409)', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => post(account, '/test/billed-in-transaction', {}, 'burst')),
    );
    const fresh = responses.filter((r) => r.statusCode === 200 && !r.headers['idempotent-replayed']);
    const replays = responses.filter((r) => r.headers['idempotent-replayed'] === 'true');
    const busy = responses.filter((r) => r.statusCode === 409);
    expect(fresh).toHaveLength(1);
    expect(replays.length + busy.length).toBe(49);
    for (const replay of replays) expect(replay.body).toBe(fresh[0]?.body);
    for (const wait of busy) {
      expect(wait.json()).toMatchObject({ code: 'IDEMPOTENCY_KEY_IN_USE' });
      expect(wait.headers['retry-after']).toBe('1');
    }
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(1);
    const [rows] = await ctx.database.db.query<{ n: bigint }>(
      'SELECT count(*) AS n FROM probe_rows WHERE account_id = $1',
      [account.accountId],
    );
    expect(rows?.n).toBe(1n);
  });

  it('a failure is not stored: the retry runs afresh', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const failed = await post(
      account,
      '/test/billed-in-transaction',
      { outcome: 'fail-after-charge' },
      'f-1',
    );
    expect(failed.statusCode).toBe(503);
    expect(await storedKeys(account.accountId)).toBe(0);
    const again = await post(account, '/test/billed-in-transaction', { outcome: 'fail-after-charge' }, 'f-1');
    expect(again.statusCode).toBe(503);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    const crashed = await post(account, '/test/billed', { outcome: 'crash' }, 'f-2');
    expect(crashed.statusCode).toBe(500);
    expect(await storedKeys(account.accountId)).toBe(0);
    const broke = await ctx.createAccount({ balanceUsd: '0.00' });
    expect((await post(broke, '/test/billed', {}, 'f-3')).statusCode).toBe(402);
    expect(await storedKeys(broke.accountId)).toBe(0);
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(0);
  });

  it('keys belong to their account: another account with the same key runs its own request', async () => {
    const a = await ctx.createAccount({ balanceUsd: '1.00' });
    const b = await ctx.createAccount({ balanceUsd: '1.00' });
    const first = await post(a, '/test/billed', {}, 'shared-name');
    const second = await post(b, '/test/billed', {}, 'shared-name');
    expect(second.statusCode).toBe(200);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(second.json().requestId).not.toBe(first.json().requestId);
    expect(await countEntries(ctx.database.db, b.accountId, 'charge')).toBe(1);
  });

  it('a key held by a request whose process died is taken over after its lock; a live one is 409', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const payload = {};
    // The fingerprint of the request, as a first attempt would have stored it.
    const { fingerprint } = await import('../../src/idempotency/idempotency.js');
    const print = fingerprint('POST', '/api/v1/test/billed', payload);
    const now = ctx.clock.now();
    await ctx.database.db.query(
      `INSERT INTO idempotency_keys (account_id, idempotency_key, fingerprint, request_id, status, locked_until, created_at)
       VALUES ($1, 'dead', $2, 'req_dead', 'running', $3, $4), ($1, 'alive', $2, 'req_alive', 'running', $5, $4)`,
      [account.accountId, print, new Date(now.getTime() - 1), now, new Date(now.getTime() + 30_000)],
    );
    const taken = await post(account, '/test/billed', payload, 'dead');
    expect(taken.statusCode).toBe(200);
    expect(taken.headers['idempotent-replayed']).toBeUndefined();
    const busy = await post(account, '/test/billed', payload, 'alive');
    expect(busy.statusCode).toBe(409);
    expect(busy.json()).toEqual({
      error: 'A request with this Idempotency-Key is still running; retry when it has finished',
      code: 'IDEMPOTENCY_KEY_IN_USE',
      details: { lockExpiresInSeconds: 30 },
      requestId: busy.headers['x-request-id'],
    });
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(1);
  });

  it('refuses a malformed key, and a key on an operation that does not take one; GET ignores it', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    for (const bad of ['x'.repeat(256), 'caf\u00e9']) {
      const response = await post(account, '/test/billed', {}, bad);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: { problems: [{ path: 'header.idempotency-key' }] },
      });
    }
    const keys = await post(account, '/keys', { name: 'x' }, 'k');
    expect(keys.statusCode).toBe(400);
    expect(keys.json()).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: {
        problems: [
          {
            path: 'header.idempotency-key',
            message: 'is not accepted by this operation (docs/api.md#idempotency)',
          },
        ],
      },
    });
    const get = await ctx.request(account.key, {
      method: 'GET',
      url: '/api/v1/account',
      headers: { 'idempotency-key': 'k' },
    });
    expect(get.statusCode).toBe(200);
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(0);
  });

  it('a paid GET with a key is an ordinary request each time: fresh answer, charged, nothing stored', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    for (const url of ['/api/v1/price/SOL', '/api/v1/markets', '/api/v1/markets?pageSize=1']) {
      const answers = [];
      for (let i = 0; i < 2; i++) {
        const response = await ctx.request(account.key, {
          method: 'GET',
          url,
          headers: { 'idempotency-key': 'same-key' },
        });
        expect(response.statusCode, url).toBe(200);
        expect(response.headers['idempotent-replayed']).toBeUndefined();
        answers.push(response.json().requestId);
      }
      expect(answers[0]).not.toBe(answers[1]);
    }
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(6);
    expect(await storedKeys(account.accountId)).toBe(0);
  });

  it('stored answers are pruned after 24 hours', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    expect((await post(account, '/test/billed', {}, 'old')).statusCode).toBe(200);
    const retention = createRetention({
      db: ctx.database.db,
      tables: await prunedTables(ctx.config),
      clock: ctx.clock,
      log: silentLog,
      settings: ctx.config.retention,
    });
    await retention.run(new Date(ctx.clock.now().getTime() + 23 * 3_600_000));
    expect(await storedKeys(account.accountId)).toBe(1);
    await retention.run(new Date(ctx.clock.now().getTime() + 24 * 3_600_000 + 1000));
    expect(await storedKeys(account.accountId)).toBe(0);
  });
});

describe('fingerprint', () => {
  it('ignores key order at every level, keeps array order, and tells values apart', async () => {
    const { fingerprint } = await import('../../src/idempotency/idempotency.js');
    const of = (body: unknown) => fingerprint('POST', '/api/v1/price/batch', body);
    expect(of({ symbols: ['SOL', 'JUP'], n: 1 })).toBe(of({ n: 1, symbols: ['SOL', 'JUP'] }));
    expect(of({ symbols: ['SOL', 'JUP'] })).not.toBe(of({ symbols: ['JUP', 'SOL'] }));
    expect(of({ a: [{ x: 1, y: [true, null] }] })).toBe(of({ a: [{ y: [true, null], x: 1 }] }));
    expect(of({ a: [1, '1'] })).not.toBe(of({ a: ['1', 1] }));
    expect(of({ a: [{ x: 1 }] })).not.toBe(of({ a: [{ x: 2 }] }));
    expect(fingerprint('POST', '/api/v1/price/batch', { s: [] })).not.toBe(
      fingerprint('POST', '/api/v1/ai/resolve', { s: [] }),
    );
  });
});
