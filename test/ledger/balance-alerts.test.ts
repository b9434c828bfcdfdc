import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext } from '../../src/context.js';
import type { Queryable } from '../../src/db/database.js';
import { emitBalanceAlerts } from '../../src/ledger/alerts.js';
import { decide, REFUSED } from '../../src/ledger/batch-statements.js';
import type { BillingOutcome } from '../../src/ledger/biller.js';
import { charge } from '../../src/ledger/charge.js';
import { CoalescingBiller } from '../../src/ledger/coalescing-biller.js';
import { adjustBalance, chargeAccount, creditDeposit, refundCharge } from '../../src/ledger/ledger.js';
import { systemClock } from '../../src/lib/clock.js';
import { parseUsd } from '../../src/lib/money.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { balanceOf, expectLedgerReconciles } from '../helpers/ledger.js';
import { PROBE_TABLE, probeRoutes, transactionalProbeRoutes } from '../helpers/probe-routes.js';

/**
 * Balance alerts (docs/webhooks.md#balance-alerts): the thresholds on the account row, each money
 * movement writing the crossings it makes in its own statement, the 402 that disarms `depleted`.
 * Asserted on the alert rows (balance_alerts) the events are recorded from.
 */
let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext({
    config: { PRICE_VENUES: '' },
    extraRoutes: (app) => {
      probeRoutes(app);
      transactionalProbeRoutes(app);
    },
  });
  // A moment outside sandbox-gamma's outlier minutes (the sandbox price route).
  ctx.clock.set('2026-11-21T12:00:05Z');
  await ctx.database.db.exec(PROBE_TABLE);
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

interface AlertRow {
  kind: string;
  threshold: string | null;
  balance: string;
}

async function alerts(accountId: string): Promise<AlertRow[]> {
  const rows = await ctx.database.db.query<{
    kind: string;
    threshold_micros: bigint | null;
    balance_micros: bigint;
  }>('SELECT kind, threshold_micros, balance_micros FROM balance_alerts WHERE account_id = $1 ORDER BY id', [
    accountId,
  ]);
  return rows.map((r) => ({
    kind: r.kind,
    threshold: r.threshold_micros === null ? null : String(r.threshold_micros),
    balance: String(r.balance_micros),
  }));
}

const low = (threshold: string, balance: string) => ({
  kind: 'low',
  threshold: String(parseUsd(threshold)),
  balance: String(parseUsd(balance)),
});

function setAlerts(key: string, lowBalanceUsd: unknown) {
  return ctx.request(key, { method: 'PUT', url: '/api/v1/account/alerts', payload: { lowBalanceUsd } });
}

async function account(balanceUsd: string, thresholds?: string[], mode: 'live' | 'sandbox' = 'sandbox') {
  const created = await ctx.createAccount({ mode, balanceUsd });
  if (thresholds) expect((await setAlerts(created.key, thresholds)).statusCode).toBe(200);
  return created;
}

const price = (key: string) => ctx.request(key, { method: 'GET', url: '/api/v1/price/SOL' });
const probe = (key: string) =>
  ctx.request(key, { method: 'POST', url: '/api/v1/test/billed', payload: { outcome: 'ok' } });

function spend(a: TestAccount, usd: string) {
  return chargeAccount(ctx.database.db, {
    accountId: a.accountId,
    amountMicros: parseUsd(usd) as bigint,
    operation: 'test',
  });
}

let deposits = 0;
function deposit(a: TestAccount, usd: string) {
  deposits += 1;
  return creditDeposit(createContext(ctx.database.db, systemClock), {
    accountId: a.accountId,
    amountMicros: parseUsd(usd) as bigint,
    reference: `alerts-${a.accountId}-${deposits}`,
  });
}

describe('GET and PUT /account/alerts', () => {
  it('a live account starts with 5.00, a sandbox one with none; PUT replaces them, highest first; free', async () => {
    const live = await account('10.00', undefined, 'live');
    const sandbox = await account('10.00');
    const get = (key: string) => ctx.request(key, { method: 'GET', url: '/api/v1/account/alerts' });
    expect((await get(live.key)).json()).toMatchObject({ lowBalanceUsd: ['5.00'] });
    expect((await get(sandbox.key)).json()).toMatchObject({ lowBalanceUsd: [] });
    const set = await setAlerts(sandbox.key, ['1.00', '5.00', '2.5']);
    expect(set.statusCode, set.body).toBe(400);
    const ok = await setAlerts(sandbox.key, ['1.00', '5.00', '2.50']);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ lowBalanceUsd: ['5.00', '2.50', '1.00'] });
    expect((await get(sandbox.key)).json()).toMatchObject({ lowBalanceUsd: ['5.00', '2.50', '1.00'] });
    expect((await setAlerts(live.key, [])).json()).toMatchObject({ lowBalanceUsd: [] });
    expect((await get(live.key)).json()).toMatchObject({ lowBalanceUsd: [] });
    expect(await balanceOf(ctx.database.db, live.accountId)).toBe(10_000_000n);
    expect(await balanceOf(ctx.database.db, sandbox.accountId)).toBe(10_000_000n);
  });

  it.each([
    ['four thresholds', ['4.00', '3.00', '2.00', '1.00'], 'body.lowBalanceUsd'],
    ['a negative amount', ['-1.00'], 'body.lowBalanceUsd[0]'],
    ['zero', ['0.00'], 'body.lowBalanceUsd[0]'],
    ['not money', ['five'], 'body.lowBalanceUsd[0]'],
    ['a number', [5], 'body.lowBalanceUsd[0]'],
    ['too many decimals', ['1.0000001'], 'body.lowBalanceUsd[0]'],
    ['duplicates', ['1.00', '1.000'], 'body.lowBalanceUsd[1]'],
    ['no list', 'five', 'body.lowBalanceUsd'],
  ])('refuses %s with 400 VALIDATION_ERROR naming it, changing nothing', async (_, thresholds, path) => {
    const a = await account('10.00', ['2.00']);
    const response = await setAlerts(a.key, thresholds);
    expect(response.statusCode, response.body).toBe(400);
    const body = response.json();
    expect(body.code).toBe('VALIDATION_ERROR');
    expect(body.details.problems.map((p: { path: string }) => p.path)).toContain(path);
    const now = await ctx.request(a.key, { method: 'GET', url: '/api/v1/account/alerts' });
    expect(now.json()).toMatchObject({ lowBalanceUsd: ['2.00'] });
  });
});

describe('balance.low', () => {
  it('fires once when a charge takes the balance below a threshold, not at it; re-armed at or above it', async () => {
    const a = await account('1.02', ['1.00']);
    for (const left of ['1.01', '1.00']) {
      expect((await price(a.key)).json().remainingBalanceUsd).toBe(left);
    }
    expect(await alerts(a.accountId)).toEqual([]);
    expect((await price(a.key)).json().remainingBalanceUsd).toBe('0.99');
    expect((await price(a.key)).json().remainingBalanceUsd).toBe('0.98');
    expect(await alerts(a.accountId)).toEqual([low('1.00', '0.99')]);
    // A top-up to exactly the threshold re-arms it; the next crossing fires again.
    await deposit(a, '0.02');
    await price(a.key);
    expect(await alerts(a.accountId)).toEqual([low('1.00', '0.99'), low('1.00', '0.99')]);
  });

  it('a top-up that stays below the threshold does not re-arm it', async () => {
    const a = await account('1.00', ['1.00']);
    await spend(a, '0.50');
    await deposit(a, '0.25');
    await spend(a, '0.25');
    expect(await alerts(a.accountId)).toEqual([low('1.00', '0.50')]);
  });

  it('one charge crossing two thresholds fires two alerts; a threshold the balance never reached none', async () => {
    const a = await account('3.00', ['2.50', '1.50', '5.00']);
    await spend(a, '2.00');
    expect(await alerts(a.accountId)).toEqual([low('2.50', '1.00'), low('1.50', '1.00')]);
  });

  it('a sandbox account has none by default; a live one crosses 5.00', async () => {
    const sandbox = await account('6.00');
    const live = await account('6.00', undefined, 'live');
    for (const a of [sandbox, live]) await spend(a, '2.00');
    expect(await alerts(sandbox.accountId)).toEqual([]);
    expect(await alerts(live.accountId)).toEqual([low('5.00', '4.00')]);
  });

  it('a charge in a caller’s transaction (jobs, stream minutes) crosses with it, and not when it rolls back', async () => {
    const a = await account('1.00', ['0.80']);
    const amountMicros = parseUsd('0.30') as bigint;
    await expect(
      ctx.database.db.transaction(async (tx) => {
        await charge(tx, { accountId: a.accountId, amountMicros, operation: 'job' });
        throw new Error('the job could not be stored');
      }),
    ).rejects.toThrow('could not be stored');
    expect(await alerts(a.accountId)).toEqual([]);
    await ctx.database.db.transaction((tx) =>
      charge(tx, { accountId: a.accountId, amountMicros, operation: 'job' }),
    );
    expect(await alerts(a.accountId)).toEqual([low('0.80', '0.70')]);
  });

  it('an adjustment down crosses like a charge; a refund back above re-arms', async () => {
    const a = await account('2.00', ['1.00']);
    const ops = createContext(ctx.database.db, systemClock);
    const charged = await spend(a, '0.30');
    if (!charged.ok) throw new Error('not charged');
    await adjustBalance(ops, { accountId: a.accountId, amountMicros: -900_000n, memo: 'correction' });
    expect(await alerts(a.accountId)).toEqual([low('1.00', '0.80')]);
    await refundCharge(ctx.database.db, { chargeEntryId: charged.entryId });
    expect(await balanceOf(ctx.database.db, a.accountId)).toBe(1_100_000n);
    await spend(a, '0.20');
    expect(await alerts(a.accountId)).toEqual([low('1.00', '0.80'), low('1.00', '0.90')]);
  });

  it('a coalesced batch writes its crossings: the covered pass and the one-by-one pass', async () => {
    const covered = await account('1.00', ['0.75', '0.50']);
    const short = await account('0.03', ['0.02']);
    const items = [
      ...Array.from({ length: 6 }, () => ({ accountId: covered.accountId, amountMicros: 100_000n })),
      ...Array.from({ length: 5 }, () => ({ accountId: short.accountId, amountMicros: 10_000n })),
    ].map((i) => ({ ...i, operation: 'getPrice' }));
    const outcomes: BillingOutcome[] = items.map(() => REFUSED);
    await decide(ctx.database.db, items, outcomes, false);
    expect(outcomes.filter((o) => o.ok)).toHaveLength(9);
    // The batch took 1.00 to 0.40 in one write: both thresholds crossed, each once.
    expect(await alerts(covered.accountId)).toEqual([low('0.75', '0.40'), low('0.50', '0.40')]);
    // 0.03 cannot pay five 0.01: the one-by-one pass charges three, to 0.00.
    expect(await alerts(short.accountId)).toEqual([low('0.02', '0.00')]);
  });
});

describe('exactly once under concurrency', () => {
  it('60 clients spending one account over real HTTP, coalesced: one alert per threshold, one depleted, reconciled', async () => {
    const biller = ctx.app.services.biller;
    expect(biller).toBeInstanceOf(CoalescingBiller);
    const batchesBefore = (biller as CoalescingBiller).stats.batches;
    const a = await account('0.80', ['0.50', '0.20', '0.05']);
    const base = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: 60 }, async () => {
        for (let i = 0; i < 2; i++) {
          const response = await fetch(`${base}/api/v1/price/SOL`, {
            headers: { authorization: `Bearer ${a.key}` },
          });
          await response.arrayBuffer();
          statuses.push(response.status);
        }
      }),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(80);
    expect(statuses.filter((s) => s === 402)).toHaveLength(40);
    expect((biller as CoalescingBiller).stats.batches).toBeGreaterThan(batchesBefore);
    expect(await balanceOf(ctx.database.db, a.accountId)).toBe(0n);
    const rows = await alerts(a.accountId);
    expect(rows.filter((r) => r.kind === 'low').map((r) => r.threshold)).toEqual(
      expect.arrayContaining(['500000', '200000', '50000']),
    );
    expect(rows.filter((r) => r.kind === 'low')).toHaveLength(3);
    expect(rows.filter((r) => r.kind === 'depleted')).toEqual([
      { kind: 'depleted', threshold: null, balance: '0' },
    ]);
    // Each alert carries the balance its crossing left, below its threshold.
    for (const r of rows.filter((row) => row.kind === 'low')) {
      expect(BigInt(r.balance)).toBeLessThan(BigInt(r.threshold as string));
    }
    await expectLedgerReconciles(ctx.database.db);
  });
});

describe('balance.depleted', () => {
  it('fires on the first 402 only, re-armed by a deposit, then by an adjustment', async () => {
    const a = await account('0.01');
    expect((await probe(a.key)).statusCode).toBe(200);
    for (let i = 0; i < 3; i++) expect((await probe(a.key)).statusCode).toBe(402);
    const depleted = async () => (await alerts(a.accountId)).filter((r) => r.kind === 'depleted');
    expect(await depleted()).toHaveLength(1);
    await deposit(a, '0.005');
    for (let i = 0; i < 2; i++) expect((await probe(a.key)).statusCode).toBe(402);
    expect(await depleted()).toEqual([
      { kind: 'depleted', threshold: null, balance: '0' },
      { kind: 'depleted', threshold: null, balance: '5000' },
    ]);
    await adjustBalance(createContext(ctx.database.db, systemClock), {
      accountId: a.accountId,
      amountMicros: 1n,
      memo: 'goodwill',
    });
    expect((await probe(a.key)).statusCode).toBe(402);
    expect(await depleted()).toHaveLength(3);
  });

  it('many concurrent 402s fire it once', async () => {
    const a = await account('0.00');
    const responses = await Promise.all(Array.from({ length: 50 }, () => probe(a.key)));
    expect(responses.every((r) => r.statusCode === 402)).toBe(true);
    expect((await alerts(a.accountId)).filter((r) => r.kind === 'depleted')).toHaveLength(1);
  });

  it('a refusal inside a route’s own transaction fires it too (after the rollback)', async () => {
    const a = await account('0.00');
    const response = await ctx.request(a.key, {
      method: 'POST',
      url: '/api/v1/test/billed-in-transaction',
      payload: { outcome: 'ok' },
    });
    expect(response.statusCode).toBe(402);
    expect((await alerts(a.accountId)).filter((r) => r.kind === 'depleted')).toHaveLength(1);
  });
});

describe('emitting the alerts', () => {
  it('hands each alert to the recorder once, even with runs side by side, with its event data', async () => {
    const a = await account('1.00', ['0.60']);
    await spend(a, '0.50');
    const seen: { type: string; data: unknown; mode: string }[] = [];
    const record = async (
      _tx: Queryable,
      alert: { type: string; data: unknown; mode: string; accountId: string },
    ) => {
      if (alert.accountId === a.accountId)
        seen.push({ type: alert.type, data: alert.data, mode: alert.mode });
    };
    const emitter = createContext(ctx.database.db, ctx.clock);
    await Promise.all([emitBalanceAlerts(emitter, record), emitBalanceAlerts(emitter, record)]);
    await emitBalanceAlerts(emitter, record);
    expect(seen).toEqual([
      {
        type: 'balance.low',
        mode: 'sandbox',
        data: { thresholdUsd: '0.60', balanceUsd: '0.50', accountId: a.accountId },
      },
    ]);
    const [pending] = await ctx.database.db.query<{ n: bigint }>(
      'SELECT count(*) AS n FROM balance_alerts WHERE emitted_at IS NULL',
    );
    expect(pending?.n).toBe(0n);
  });

  it('a recorder that fails leaves the alerts for the next run', async () => {
    const a = await account('1.00', ['0.60']);
    await spend(a, '0.50');
    const emitter = createContext(ctx.database.db, ctx.clock);
    await expect(
      emitBalanceAlerts(emitter, async () => {
        throw new Error('events table is away');
      }),
    ).rejects.toThrow('away');
    let n = 0;
    await emitBalanceAlerts(emitter, async () => {
      n += 1;
    });
    expect(n).toBe(1);
  });
});
