import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoalescingBiller } from '../../src/ledger/coalescing-biller.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';

/**
 * Scheduling under load on one account (docs/jobs.md#how-scheduling-commits): concurrent requests
 * are coalesced, their charges and jobs written by one transaction per batch. Whatever the batch,
 * every answered 200 has exactly one job and one charge, and nothing else was written: not for a
 * request the balance refused, nor a validation error, nor a replayed Idempotency-Key, nor a batch
 * that failed.
 */

const HOOK = 'https://hooks.example.com/sibyl';
const PRICE = 50_000n; // 0.05

interface World {
  ctx: TestContext;
  biller: CoalescingBiller;
}

async function world(): Promise<World> {
  let biller: CoalescingBiller | undefined;
  const ctx = await createTestContext({
    biller: (db) => {
      // As the app makes it (src/app.ts).
      biller = new CoalescingBiller(db, { maxBatch: 1000, maxInFlight: 1, gather: db.kind === 'pglite' });
      return biller;
    },
  });
  ctx.clock.set('2026-11-22T12:00:00.000Z');
  if (!biller) throw new Error('the app made no biller');
  return { ctx, biller };
}

function schedule(ctx: TestContext, account: TestAccount, i: number, extra: object = {}, key?: string) {
  const at = new Date(ctx.clock.now().getTime() + (60 + i) * 60_000).toISOString();
  // Both forms of the operation, alternately.
  const [url, payload] =
    i % 2 === 0
      ? ['/api/v1/price/schedule', { symbol: 'SOL', resolutionTimestamp: at, callbackUrl: HOOK, ...extra }]
      : ['/api/v1/price/scheduled', { symbol: 'ETH', scheduledFor: at, ...extra }];
  return ctx.request(account.key, {
    method: 'POST',
    url,
    payload,
    ...(key ? { headers: { 'idempotency-key': key } } : {}),
  });
}

interface JobWithCharge {
  id: string;
  request_id: string;
  cost_micros: bigint;
  charge_request_id: string | null;
  charge_amount: bigint | null;
  charge_operation: string | null;
  balance_after_micros: bigint | null;
}

/** The account's jobs, each joined to the ledger entry it names as its charge. */
async function jobsWithCharges(ctx: TestContext, accountId: string): Promise<JobWithCharge[]> {
  return ctx.database.db.query<JobWithCharge>(
    `SELECT j.id, j.request_id, j.cost_micros, e.request_id AS charge_request_id,
            e.amount_micros AS charge_amount, e.operation AS charge_operation, e.balance_after_micros
       FROM scheduled_jobs j
       LEFT JOIN ledger_entries e ON e.id = j.charge_entry_id AND e.kind = 'charge' AND e.account_id = j.account_id
      WHERE j.account_id = $1`,
    [accountId],
  );
}

async function chargedRequests(ctx: TestContext, accountId: string): Promise<string[]> {
  const rows = await ctx.database.db.query<{ request_id: string }>(
    `SELECT request_id FROM ledger_entries WHERE account_id = $1 AND kind = 'charge' ORDER BY id`,
    [accountId],
  );
  return rows.map((r) => r.request_id);
}

/**
 * The invariant: the 200s are exactly the jobs, each job paid by one charge of its own request at
 * the price, each answer's balance the one its charge left; no other request was charged.
 */
async function expectEveryAnswerPaidOnce(
  ctx: TestContext,
  accountId: string,
  responses: readonly LightMyRequestResponse[],
) {
  const ok = responses.filter((r) => r.statusCode === 200 && r.headers['idempotent-replayed'] !== 'true');
  const jobs = await jobsWithCharges(ctx, accountId);
  expect(new Set(jobs.map((j) => j.id))).toEqual(new Set(ok.map((r) => r.json().jobId)));
  const byId = new Map(jobs.map((j) => [j.id, j]));
  for (const response of ok) {
    const body = response.json();
    const job = byId.get(body.jobId);
    expect(job).toMatchObject({
      request_id: response.headers['x-request-id'],
      cost_micros: PRICE,
      charge_request_id: response.headers['x-request-id'],
      charge_amount: -PRICE,
    });
    expect(job?.charge_operation).toMatch(/^schedulePriceCheck(At)?$/);
    expect(body.remainingBalanceUsd).toBe(usd(job?.balance_after_micros ?? -1n));
  }
  const charged = await chargedRequests(ctx, accountId);
  expect(charged).toHaveLength(jobs.length);
  expect(new Set(charged)).toEqual(new Set(ok.map((r) => r.headers['x-request-id'])));
}

function usd(micros: bigint): string {
  const whole = micros / 1_000_000n;
  const fraction = (micros % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '').padEnd(2, '0');
  return `${whole}.${fraction}`;
}

function statuses(responses: readonly LightMyRequestResponse[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const r of responses) out[r.statusCode] = (out[r.statusCode] ?? 0) + 1;
  return out;
}

describe('scheduling coalesced on one hot account', () => {
  let w: World;
  beforeAll(async () => {
    w = await world();
  });
  afterAll(async () => {
    await expectLedgerReconciles(w.ctx.database.db);
    await w.ctx.close();
  });

  it('a balance that runs out mid-way: 20 of 60 jobs accepted, each with its charge; refused and invalid ones wrote nothing', async () => {
    const { ctx, biller } = w;
    const account = await ctx.createAccount({ balanceUsd: '1.05' }); // 21 jobs of 0.05
    // One job first, so that the key's verification and the balance are cached: the burst below
    // then reaches the biller together instead of queueing behind reads (one connection on PGlite).
    const warm = await schedule(ctx, account, 100);
    expect(warm.statusCode).toBe(200);
    const before = biller.stats.largestBatch;
    const valid = Array.from({ length: 60 }, (_, i) => schedule(ctx, account, i));
    const invalid = Array.from({ length: 10 }, (_, i) =>
      schedule(ctx, account, i, i % 2 === 0 ? { symbol: 'S$L' } : { symbol: 'NOPE' }),
    );
    const responses = await Promise.all([...valid, ...invalid]);
    expect(statuses(responses.slice(0, 60))).toEqual({ 200: 20, 402: 40 });
    // An invalid request is refused for its input, or for the balance once it is spent (checked first).
    for (const r of responses.slice(60)) expect([400, 402, 404]).toContain(r.statusCode);
    for (const r of responses.filter((x) => x.statusCode === 402)) {
      expect(r.json().code).toBe('INSUFFICIENT_BALANCE');
    }
    await expectEveryAnswerPaidOnce(ctx, account.accountId, [warm, ...responses]);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(0n);
    // The requests were coalesced: a batch carried more than one of them.
    expect(biller.stats.largestBatch).toBeGreaterThan(Math.max(before, 1));
  });

  it('Idempotency-Keys: concurrent copies of a request make one job and one charge, retries replay it for free, refused ones stay refused', async () => {
    const { ctx } = w;
    const account = await ctx.createAccount({ balanceUsd: '1.00' }); // 20 jobs
    // 30 distinct requests, each sent three times at once under its own key.
    const keys = Array.from({ length: 30 }, (_, i) => `coalesced-${i}`);
    const first = await Promise.all(
      keys.flatMap((key, i) => [0, 1, 2].map(() => schedule(ctx, account, i, {}, key))),
    );
    const byKey = keys.map((_, i) => first.slice(i * 3, i * 3 + 3));
    const paid = byKey.filter((copies) => copies.some((r) => r.statusCode === 200));
    expect(paid).toHaveLength(20);
    for (const copies of paid) {
      // Every copy answers the same job: one was charged, the others replay its stored answer.
      expect(copies.map((r) => r.statusCode)).toEqual([200, 200, 200]);
      expect(new Set(copies.map((r) => r.json().jobId)).size).toBe(1);
      expect(copies.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(2);
    }
    // A refused request's copies: 402, or 409 IDEMPOTENCY_KEY_IN_USE for a copy that met it in
    // flight (docs/api.md#idempotency); either way uncharged, and a retry runs afresh.
    for (const copies of byKey.filter((c) => !paid.includes(c))) {
      expect(copies.map((r) => r.statusCode)).toContain(402);
      for (const r of copies) expect([402, 409]).toContain(r.statusCode);
    }
    await expectEveryAnswerPaidOnce(ctx, account.accountId, first);
    const charges = await countEntries(ctx.database.db, account.accountId, 'charge');
    expect(charges).toBe(20);

    // Retried later, one after another: the paid ones replay (same job, no charge), the others 402.
    for (const [i, key] of keys.entries()) {
      const again = await schedule(ctx, account, i, {}, key);
      const original = byKey[i]?.find((r) => r.headers['idempotent-replayed'] !== 'true');
      if (original?.statusCode === 200) {
        expect(again.statusCode).toBe(200);
        expect(again.headers['idempotent-replayed']).toBe('true');
        expect(again.json()).toEqual(original.json());
      } else {
        expect(again.statusCode).toBe(402);
      }
    }
    // The same key with another request: refused, uncharged.
    const paidKey = keys[byKey.indexOf(paid[0] as LightMyRequestResponse[])] as string;
    const reused = await schedule(ctx, account, 999, {}, paidKey);
    expect(reused.statusCode).toBe(422);
    expect(reused.json().code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(20);
    expect(await jobsWithCharges(ctx, account.accountId)).toHaveLength(20);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(0n);
  });
});

describe('a batch that fails', () => {
  let w: World;
  beforeAll(async () => {
    w = await world();
    // The database refuses ETH jobs (the `/price/scheduled` form): a batch with one fails whole.
    await w.ctx.database.db.exec(`
      CREATE FUNCTION refuse_eth_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.request->>'symbol' = 'ETH' THEN RAISE EXCEPTION 'refused by the test'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER refuse_eth_jobs BEFORE INSERT ON scheduled_jobs
        FOR EACH ROW EXECUTE FUNCTION refuse_eth_jobs();`);
  });
  afterAll(async () => {
    await expectLedgerReconciles(w.ctx.database.db);
    await w.ctx.close();
  });

  it('leaves no charge without its job and no job without its charge', async () => {
    const { ctx } = w;
    const account = await ctx.createAccount({ balanceUsd: '10.00' });
    const keyed = (i: number) => (i % 3 === 0 ? `failing-${i}` : undefined);
    const responses = await Promise.all(
      Array.from({ length: 40 }, (_, i) => schedule(ctx, account, i, {}, keyed(i))),
    );
    const counts = statuses(responses);
    expect(counts[500]).toBeGreaterThan(0);
    expect((counts[200] ?? 0) + (counts[500] ?? 0)).toBe(40);
    for (const r of responses.filter((x) => x.statusCode === 500))
      expect(r.json().code).toBe('INTERNAL_ERROR');
    await expectEveryAnswerPaidOnce(ctx, account.accountId, responses);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(
      10_000_000n - PRICE * BigInt(counts[200] ?? 0),
    );
    // A failed keyed request's key was not taken: its retry runs afresh (SOL jobs now succeed).
    const failedKeyed = responses.findIndex((r, i) => r.statusCode === 500 && keyed(i) && i % 2 === 0);
    if (failedKeyed >= 0) {
      const retry = await schedule(ctx, account, failedKeyed, {}, keyed(failedKeyed));
      expect(retry.statusCode).toBe(200);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
    }
  });
});
