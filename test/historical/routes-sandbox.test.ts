import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_RANGE_HOURS } from '../../src/historical/buckets.js';
import { isSandboxOutlierWindow, SANDBOX_TICK_MS } from '../../src/prices/sandbox/feed.js';
import { CANDLE_INTERVALS, INTERVAL_MS } from '../../src/prices/types.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';

/**
 * Historical prices for sandbox accounts (deterministic, derived from the sandbox spot feed), and
 * the request rules every account shares: timestamps, ranges, limits, and what is charged.
 */

const HOUR = 3_600_000;
const SOL_MINT = 'So11111111111111111111111111111111111111112';
const UNKNOWN_MINT = '7GCihgDB8fe6KNjn2MYtkzZcRjQy3t9GHdC8uHYmW2hr';
/** Inside the 15:00 bucket; the tests only ever move the clock forward (the spot cache follows it). */
const T0 = Date.parse('2026-11-20T15:42:17.500Z');
const iso = (ms: number) => new Date(ms).toISOString();

let ctx: TestContext;
let account: TestAccount;
let successes = 0;

beforeAll(async () => {
  ctx = await createTestContext();
  ctx.clock.set(new Date(T0));
  account = await ctx.createAccount({ mode: 'sandbox', balanceUsd: '20.00' });
});

afterAll(async () => {
  expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBeGreaterThanOrEqual(successes);
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

function history(symbol: string, query: Record<string, string>) {
  return ctx.request(account.key, {
    method: 'GET',
    url: `/api/v1/historical/price/${encodeURIComponent(symbol)}?${new URLSearchParams(query)}`,
  });
}

async function ok(symbol: string, query: Record<string, string>) {
  const response = await history(symbol, query);
  expect(response.statusCode, response.body).toBe(200);
  expect(response.json().costUsd).toBe('0.05');
  successes += 1;
  return response.json();
}

/** The whole error body, and proof that it cost nothing. */
async function refused(symbol: string, query: Record<string, string>) {
  const before = await balanceOf(ctx.database.db, account.accountId);
  const response = await history(symbol, query);
  expect(await balanceOf(ctx.database.db, account.accountId)).toBe(before);
  const body = response.json();
  expect(body.requestId).toBe(response.headers['x-request-id']);
  return { status: response.statusCode, ...body, requestId: undefined };
}

async function spotPrice(symbol: string): Promise<number> {
  const response = await ctx.request(account.key, { method: 'GET', url: `/api/v1/price/${symbol}` });
  expect(response.statusCode).toBe(200);
  return response.json().vwapPrice;
}

const near = (a: number, b: number) => expect(Math.abs(a - b) / b).toBeLessThan(1e-9);

describe('sandbox history', () => {
  it('serves every bucket from the three simulated venues, the open one last', async () => {
    const body = await ok('sol', { startTime: '2026-11-20T10:15:00Z', endTime: '2026-11-21T00:00:00Z' });
    expect(body).toMatchObject({
      symbol: 'SOL',
      interval: '1h',
      startTime: '2026-11-20T10:00:00.000Z',
      endTime: iso(T0),
      unavailableSources: [],
    });
    expect(body.dataPoints.map((p: { timestamp: string }) => p.timestamp.slice(11, 13))).toEqual([
      '10',
      '11',
      '12',
      '13',
      '14',
      '15',
    ]);
    for (const p of body.dataPoints) {
      expect(p.price).toBeGreaterThan(130);
      expect(p.price).toBeLessThan(170);
      expect(p.isComplete).toBe(p.timestamp !== '2026-11-20T15:00:00.000Z');
    }
  });

  it('is deterministic: the same request gives the same series, and closed buckets never change', async () => {
    const query = { startTime: '2026-11-19T00:00:00Z', endTime: '2026-11-20T12:00:00Z', interval: '15m' };
    const first = await ok('ETH', query);
    expect(first.dataPoints).toHaveLength(144);
    expect((await ok('ETH', query)).dataPoints).toEqual(first.dataPoints);
    ctx.clock.advance(3 * HOUR);
    expect((await ok('ETH', query)).dataPoints).toEqual(first.dataPoints);
  });

  it('the open bucket is the spot price now; a closed bucket is the spot price of its last tick', async () => {
    const bucketEnd = Date.parse('2026-11-21T02:00:00Z');
    ctx.clock.set(new Date(bucketEnd - 1));
    const atClose = await spotPrice('SOL');
    ctx.clock.set(new Date(bucketEnd + 25 * 60_000 + 3_000));
    const now = await spotPrice('SOL');
    const body = await ok('SOL', { startTime: '2026-11-21T00:00:00Z', endTime: '2026-11-21T03:00:00Z' });
    const [, closed, open] = body.dataPoints;
    expect(closed).toMatchObject({ timestamp: '2026-11-21T01:00:00.000Z', isComplete: true });
    near(closed.price, atClose);
    expect(open).toMatchObject({
      timestamp: '2026-11-21T02:00:00.000Z',
      isComplete: false,
      source: 'sandbox-alpha,sandbox-beta,sandbox-gamma',
      sourceCount: 3,
    });
    near(open.price, now);
  });

  it('drops sandbox-gamma when it is off, exactly as the spot price does', async () => {
    let t = Date.parse('2026-11-21T04:00:00Z');
    while (!isSandboxOutlierWindow('SOL', t)) t += SANDBOX_TICK_MS;
    ctx.clock.set(new Date(t + 1_000));
    const spot = await spotPrice('SOL');
    const body = await ok('SOL', { startTime: iso(t - 2 * HOUR), endTime: iso(t + HOUR) });
    const last = body.dataPoints.at(-1);
    expect(last).toMatchObject({ source: 'sandbox-alpha,sandbox-beta', sourceCount: 2, isComplete: false });
    near(last.price, spot);
  });

  it('a listed token’s mint is that token, echoed as given; other mints are not found', async () => {
    const query = { startTime: '2026-11-20T00:00:00Z', endTime: '2026-11-20T06:00:00Z' };
    const byMint = await ok(SOL_MINT, query);
    expect(byMint.symbol).toBe(SOL_MINT);
    expect(byMint.dataPoints).toEqual((await ok('SOL', query)).dataPoints);
    expect(await refused(UNKNOWN_MINT, query)).toEqual({
      status: 404,
      error: `No price source has 1h history for ${UNKNOWN_MINT}`,
      code: 'SYMBOL_NOT_FOUND',
      symbol: UNKNOWN_MINT,
    });
  });
});

describe('request rules', () => {
  const valid = { startTime: '2026-11-20T00:00:00Z', endTime: '2026-11-20T06:00:00Z' };

  it('malformed timestamps → 400 INVALID_TIMESTAMP naming each field', async () => {
    const message = 'is not an ISO 8601 timestamp with a zone (e.g. 2026-11-01T00:00:00Z)';
    expect(await refused('SOL', { startTime: 'yesterday', endTime: '2026-13-01T00:00:00Z' })).toEqual({
      status: 400,
      error: `query.startTime ${message}; query.endTime ${message}`,
      code: 'INVALID_TIMESTAMP',
      details: {
        problems: [
          { path: 'query.startTime', message },
          { path: 'query.endTime', message },
        ],
      },
    });
    // No zone, and an impossible date.
    for (const bad of ['2026-11-20T06:00:00', '2026-02-30T00:00:00Z', '1763600000']) {
      expect(await refused('SOL', { ...valid, endTime: bad })).toMatchObject({
        status: 400,
        code: 'INVALID_TIMESTAMP',
        details: { problems: [{ path: 'query.endTime', message }] },
      });
    }
  });

  it('a reversed or empty range → 400 VALIDATION_ERROR', async () => {
    for (const endTime of ['2026-11-19T23:00:00Z', valid.startTime]) {
      expect(await refused('SOL', { ...valid, endTime })).toEqual({
        status: 400,
        error: 'startTime must be before endTime',
        code: 'VALIDATION_ERROR',
        details: { problems: [{ path: 'query.endTime', message: 'must be after startTime' }] },
      });
    }
  });

  it('a range in the future → 400 VALIDATION_ERROR', async () => {
    const now = ctx.clock.now().getTime();
    for (const start of [now, now + HOUR]) {
      expect(await refused('SOL', { startTime: iso(start), endTime: iso(start + HOUR) })).toEqual({
        status: 400,
        error: 'The range is in the future: startTime must be before now',
        code: 'VALIDATION_ERROR',
        details: { problems: [{ path: 'query.startTime', message: `is not before now (${iso(now)})` }] },
      });
    }
  });

  it('schema problems → 400 VALIDATION_ERROR: missing times, unknown interval, unknown fields', async () => {
    expect(await refused('SOL', { endTime: valid.endTime })).toMatchObject({
      status: 400,
      code: 'VALIDATION_ERROR',
      details: { problems: [{ path: 'query.startTime', message: 'is required' }] },
    });
    const wrongInterval = await refused('SOL', { ...valid, interval: '2h' });
    expect(wrongInterval).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    expect(wrongInterval.details.problems.map((p: { path: string }) => p.path)).toEqual(['query.interval']);
    expect(await refused('SOL', { ...valid, limit: '10' })).toMatchObject({
      status: 400,
      code: 'VALIDATION_ERROR',
      details: { problems: [{ path: 'query.limit', message: 'is not a known field' }] },
    });
  });

  it('input errors come before unknown symbols: 400s, then 404', async () => {
    expect(await refused('bad-symbol!', { startTime: 'x', endTime: 'y' })).toMatchObject({
      status: 400,
      code: 'INVALID_SYMBOL',
    });
    expect(await refused('NOSUCH', { startTime: 'x', endTime: valid.endTime })).toMatchObject({
      code: 'INVALID_TIMESTAMP',
    });
    expect(await refused('NOSUCH', valid)).toMatchObject({
      status: 404,
      code: 'SYMBOL_NOT_FOUND',
      symbol: 'NOSUCH',
    });
  });

  it.each(CANDLE_INTERVALS)(
    '%s: the range and data point limits at their exact boundaries',
    async (interval) => {
      const step = INTERVAL_MS[interval];
      const maxMs = MAX_RANGE_HOURS[interval] * HOUR;
      const end = Date.parse('2026-11-20T00:00:00Z');
      // The largest range that passes: the full maximum, or 1000 buckets when that comes first.
      const largest = Math.min(maxMs, 1000 * step);
      const body = await ok('BTC', { startTime: iso(end - largest), endTime: iso(end), interval });
      expect(body.dataPoints).toHaveLength(largest / step);
      expect(body.interval).toBe(interval);

      const over = await refused('BTC', { startTime: iso(end - largest - 1), endTime: iso(end), interval });
      expect(over).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
      expect(over.details.limit).toEqual(
        largest === maxMs
          ? { interval, maxRangeHours: MAX_RANGE_HOURS[interval] }
          : { interval, maxDataPoints: 1000 },
      );
    },
  );
});
