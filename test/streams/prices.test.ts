import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PriceTarget, PriceVenue } from '../../src/prices/index.js';
import type { TestAccount, TestContext } from '../helpers/context.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';
import { named, type StreamService, startStreamService } from './service.js';

/**
 * GET /stream/prices (docs/streams.md#prices): a snapshot per symbol, then each change of its VWAP,
 * computed once per symbol per interval in the process whatever the number of streams; bad input
 * refused before anything is charged; minutes charged on the ledger until the balance cannot pay.
 */

/** A live venue in this process that answers a new SOL price at every call, and counts them. */
function countingVenue(name: 'binance' | 'coinbase', base: number, clock: () => Date) {
  const venue = {
    calls: 0,
    name,
    role: 'market' as const,
    canPrice: (target: PriceTarget) => target.token?.symbol === 'SOL',
    async fetchQuote() {
      venue.calls += 1;
      return { price: base + venue.calls / 100, volume24hUsd: 1_000_000, timestamp: clock() };
    },
  };
  return venue;
}

let service: StreamService;
let ctx: TestContext;
let venues: ReturnType<typeof countingVenue>[];

beforeAll(async () => {
  let now = () => new Date();
  venues = [countingVenue('binance', 150, () => now()), countingVenue('coinbase', 150.05, () => now())];
  service = await startStreamService({
    // Every computation asks the venues (no quote cache): venue calls count computations.
    config: { STREAM_PRICE_INTERVAL_MS: '100', PRICE_CACHE_TTL_MS: '0', PRICE_ERROR_CACHE_TTL_MS: '0' },
    app: { liveVenues: venues as unknown as PriceVenue[] },
  });
  ctx = service.ctx;
  now = () => ctx.clock.now();
});
afterAll(() => service.close());

const stream = (key: string, symbols: string, headers: Record<string, string> = {}) =>
  service.open(`/stream/prices?symbols=${symbols}`, key, headers);

describe('a price stream', () => {
  it('announces its price and limits, then a snapshot per symbol, then changes, every event with an id', async () => {
    const account = await ctx.createAccount({ mode: 'sandbox' });
    const client = await stream(account.key, 'SOL,jup,So11111111111111111111111111111111111111112');
    expect(client.response.status).toBe(200);
    expect(client.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    await client.until(() => named(client, 'price').length >= 2);
    const [announce, ...rest] = client.events;
    expect(announce).toMatchObject({
      event: 'stream',
      id: undefined,
      data: {
        minuteUsd: '0.002',
        limits: { perKey: 3, perAccount: 10, perAddress: 20, perProcess: 1000, symbols: 50 },
      },
    });
    // SOL and its mint collapse into one symbol, as in the batch.
    expect(rest.slice(0, 2).map((e) => (e.data as { symbol: string }).symbol)).toEqual(['SOL', 'JUP']);
    const sol = rest[0]?.data as Record<string, unknown>;
    expect(sol).toMatchObject({ symbol: 'SOL', isValid: expect.any(Boolean), token: { symbol: 'SOL' } });
    expect(sol.vwapPrice).toEqual(expect.any(Number));
    expect(sol).not.toHaveProperty('costUsd');
    expect(sol).not.toHaveProperty('remainingBalanceUsd');
    expect(sol.requestId).toBe(client.response.headers.get('x-request-id'));
    // The sandbox feed moves every 10 s: the next tick sends the new VWAPs.
    ctx.clock.advance(10_000);
    await client.until(() => named(client, 'price').length >= 4);
    const prices = named(client, 'price');
    const solPrices = prices.filter((e) => (e.data as { symbol: string }).symbol === 'SOL');
    expect(solPrices.length).toBeGreaterThanOrEqual(2);
    const [before, after] = solPrices.map((e) => (e.data as { vwapPrice: number }).vwapPrice);
    expect(after).not.toBe(before);
    for (const event of prices) expect(event.id).toMatch(/^p\.\d+\.\d+$/);
    expect(new Set(prices.map((e) => e.id)).size).toBe(prices.length);
    await client.close();
  });

  it('computes each symbol once per interval, whatever the number of streams', async () => {
    const accounts = await Promise.all([0, 1, 2].map(() => ctx.createAccount({ mode: 'live' })));
    const keys = [
      ...accounts.map((a) => a.key),
      (await ctx.addKey((accounts[0] as TestAccount).accountId)).key,
      (await ctx.addKey((accounts[1] as TestAccount).accountId)).key,
    ];
    const opened = await Promise.all(keys.map((key) => stream(key, 'SOL')));
    for (const client of opened) await client.until(() => named(client, 'price').length >= 6);
    const calls = venues.map((v) => v.calls);
    const seen = new Set(
      opened.flatMap((c) => named(c, 'price').map((e) => (e.data as { vwapPrice: number }).vwapPrice)),
    );
    // Each computation asks each venue once and moves the price: one distinct VWAP per computation,
    // shared by the five streams. Computed per stream, the venues would have been called five times as often.
    for (const n of calls) expect(n).toBeLessThanOrEqual(seen.size + 3);
    // And every stream saw the same computations (the newest each tick), not its own.
    const firsts = opened.map((c) =>
      named(c, 'price')
        .slice(-3)
        .map((e) => (e.data as { vwapPrice: number }).vwapPrice),
    );
    for (const list of firsts) for (const price of list) expect(seen.has(price)).toBe(true);
    for (const client of opened) await client.close();
  });

  it('resumes with the current prices after a cut (Last-Event-ID)', async () => {
    const account = await ctx.createAccount({ mode: 'sandbox' });
    const first = await stream(account.key, 'SOL,BONK');
    await first.until(() => named(first, 'price').length >= 2);
    const last = named(first, 'price').at(-1)?.id as string;
    await first.close();
    const again = await stream(account.key, 'SOL,BONK', { 'last-event-id': last });
    expect(again.response.status).toBe(200);
    await again.until(() => named(again, 'price').length >= 2);
    expect(named(again, 'price').map((e) => (e.data as { symbol: string }).symbol)).toEqual(['SOL', 'BONK']);
    expect(again.comments.some((c) => c.includes(`resumed after ${last}`))).toBe(true);
    await again.close();
  });
});

describe('bad input, answered before any charge', () => {
  const cases: [string, string, Record<string, string>, number, string][] = [
    ['51 symbols', Array.from({ length: 51 }, () => 'SOL').join(','), {}, 400, 'BATCH_LIMIT_EXCEEDED'],
    ['a malformed symbol', 'SOL,not-a-symbol!', {}, 400, 'INVALID_SYMBOL'],
    ['an empty entry', 'SOL,,JUP', {}, 400, 'INVALID_SYMBOL'],
    ['a symbol the registry does not know', 'SOL,NOPE', {}, 404, 'SYMBOL_NOT_FOUND'],
    ['a malformed Last-Event-ID', 'SOL', { 'last-event-id': 'yesterday' }, 400, 'VALIDATION_ERROR'],
    ['a market event id on the price stream', 'SOL', { 'last-event-id': 'm.12' }, 400, 'VALIDATION_ERROR'],
  ];
  it.each(cases)('%s', async (_name, symbols, headers, status, code) => {
    const account = await ctx.createAccount({ mode: 'sandbox', balanceUsd: '1.00' });
    const response = await ctx.request(account.key, {
      method: 'GET',
      url: `/api/v1/stream/prices?symbols=${encodeURIComponent(symbols)}`,
      headers,
    });
    expect(response.statusCode).toBe(status);
    expect(response.json()).toMatchObject({ code });
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(0);
  });

  it('a query without symbols, or with another parameter, is VALIDATION_ERROR', async () => {
    const account = await ctx.createAccount({ mode: 'sandbox' });
    for (const url of ['/api/v1/stream/prices', '/api/v1/stream/prices?symbols=SOL&since=1']) {
      const response = await ctx.request(account.key, { method: 'GET', url });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
    }
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(0);
  });

  it('a key without the price permission is refused', async () => {
    const account = await ctx.createAccount({ mode: 'sandbox', permissions: ['markets'] });
    const response = await ctx.request(account.key, {
      method: 'GET',
      url: '/api/v1/stream/prices?symbols=SOL',
    });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toMatchObject({ code: 'PERMISSION_DENIED' });
  });
});

describe('metering', () => {
  it('charges each started minute exactly, and ends the stream when the balance cannot pay the next', async () => {
    const account = await ctx.createAccount({ mode: 'sandbox', balanceUsd: '0.005' });
    const client = await stream(account.key, 'SOL');
    await client.until(() => named(client, 'price').length >= 1);
    // Minute 0 at connect.
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(3000n);
    await advance(59_999);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(3000n);
    await advance(1);
    await eventuallyBalance(account.accountId, 1000n);
    await advance(60_000);
    await client.finished();
    expect(client.events.at(-1)).toMatchObject({ event: 'error', data: { code: 'INSUFFICIENT_BALANCE' } });
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(1000n);
    const rows = await ctx.database.db.query<{
      amount_micros: bigint;
      operation: string;
      request_id: string;
    }>(
      `SELECT amount_micros, operation, request_id FROM ledger_entries WHERE account_id = $1 AND kind = 'charge'`,
      [account.accountId],
    );
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row.amount_micros).toBe(-2000n);
      expect(row.operation).toBe('streamPrices');
      expect(row.request_id).toBe(client.response.headers.get('x-request-id'));
    }
    // Usage reports show the minutes as their own operation.
    const usage = await ctx.request(account.key, {
      method: 'GET',
      url: `/api/v1/account/usage?groupBy=operation&from=${new Date(ctx.clock.now().getTime() - 86_400_000).toISOString()}&to=${new Date(ctx.clock.now().getTime() + 60_000).toISOString()}`,
    });
    expect(usage.json().rows).toEqual([
      expect.objectContaining({ group: 'streamPrices', requests: 2, chargedUsd: '0.004' }),
    ]);
  });

  it('refuses to open (402) when the first minute cannot be paid, taking nothing', async () => {
    const account = await ctx.createAccount({ mode: 'sandbox', balanceUsd: '0.001' });
    const response = await ctx.request(account.key, {
      method: 'GET',
      url: '/api/v1/stream/prices?symbols=SOL',
    });
    expect(response.statusCode).toBe(402);
    expect(response.json()).toMatchObject({ code: 'INSUFFICIENT_BALANCE' });
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(1000n);
  });

  it('streams of one account paying their minutes together never overdraw it; the ledger reconciles', async () => {
    // 0.021 pays ten minutes and a half: three streams pay three minutes each per sweep.
    const account = await ctx.createAccount({ mode: 'sandbox', balanceUsd: '0.021' });
    const keys = [
      account.key,
      (await ctx.addKey(account.accountId)).key,
      (await ctx.addKey(account.accountId)).key,
    ];
    const opened = await Promise.all(keys.map((key) => stream(key, 'SOL,ETH')));
    for (const client of opened) await client.until(() => named(client, 'price').length >= 1);
    for (let minute = 1; minute <= 5; minute++) await advance(60_000);
    for (const client of opened) await client.finished();
    for (const client of opened)
      expect(client.events.at(-1)).toMatchObject({ event: 'error', data: { code: 'INSUFFICIENT_BALANCE' } });
    const charges = await countEntries(ctx.database.db, account.accountId, 'charge');
    expect(charges).toBe(10);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(1000n);
    await expectLedgerReconciles(ctx.database.db);
  });
});

/**
 * Moves the test clock in steps of at most 20 s, each followed by the streams' periodic look: a
 * single jump past 30 s would make an event written just before it look 30 s unsent (too slow).
 */
async function advance(ms: number): Promise<void> {
  for (let left = ms; left > 0; left -= 20_000) {
    ctx.clock.advance(Math.min(left, 20_000));
    await ctx.app.services.streams.sweep();
    await new Promise((r) => setTimeout(r, 30));
  }
}

async function eventuallyBalance(accountId: string, micros: bigint): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await balanceOf(ctx.database.db, accountId)) === micros) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  expect(await balanceOf(ctx.database.db, accountId)).toBe(micros);
}
