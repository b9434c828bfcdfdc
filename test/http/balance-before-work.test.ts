import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createContext } from '../../src/context.js';
import { creditDeposit } from '../../src/ledger/ledger.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { type FakeServer, startFakeServer } from '../helpers/fake-server.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';

/**
 * The balance is checked before paid work (docs/api.md#money): a request its account cannot pay is
 * answered 402 INSUFFICIENT_BALANCE at once, and no venue is asked. One local server stands in for
 * every venue and counts what it is asked; it answers 503, so a request that reaches it is a
 * PRICE_UNAVAILABLE — what an unfunded live key used to get, after calling every venue.
 */

let ctx: TestContext;
let venues: FakeServer;

beforeAll(async () => {
  venues = await startFakeServer(() => ({ status: 503, body: { message: 'down' } }));
  ctx = await createTestContext({
    config: {
      PRICE_VENUES: 'binance,coinbase,kraken,okx',
      BINANCE_BASE_URL: venues.url,
      COINBASE_BASE_URL: venues.url,
      KRAKEN_BASE_URL: venues.url,
      OKX_BASE_URL: venues.url,
      PRICE_VENUE_TIMEOUT_MS: '3000',
      PRICE_ERROR_CACHE_TTL_MS: '0',
      // Every call here fails: no venue may be skipped for it, or the funded control would not call.
      PRICE_BREAKER_FAILURES: '1000',
    },
  });
});

afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
  await venues.close();
});

beforeEach(() => {
  ctx.clock.advance(60_000);
  venues.requests.length = 0;
});

const price = (key: string, symbol = 'SOL') =>
  ctx.request(key, { method: 'GET', url: `/api/v1/price/${symbol}` });
const batch = (key: string, symbols: string[], idempotencyKey?: string) =>
  ctx.request(key, {
    method: 'POST',
    url: '/api/v1/price/batch',
    payload: { symbols },
    ...(idempotencyKey ? { headers: { 'idempotency-key': idempotencyKey } } : {}),
  });
const iso = (ms: number) => new Date(ms).toISOString();
const history = (key: string) => {
  const now = ctx.clock.now().getTime();
  const query = new URLSearchParams({
    startTime: iso(now - 6 * 3_600_000),
    endTime: iso(now - 3_600_000),
    interval: '1h',
  });
  return ctx.request(key, { method: 'GET', url: `/api/v1/historical/price/SOL?${query}` });
};

function refusal(
  response: { json(): unknown; headers: Record<string, unknown> },
  cost: string,
  balance: string,
) {
  expect(response.json()).toEqual({
    error: `The balance cannot pay for this request (${cost} USD)`,
    code: 'INSUFFICIENT_BALANCE',
    details: { costUsd: cost, balanceUsd: balance },
    requestId: response.headers['x-request-id'],
  });
}

describe('the balance before paid work', () => {
  it('a funded live key reaches the venues (the control: this server counts their calls)', async () => {
    const funded = await ctx.createAccount({ mode: 'live', balanceUsd: '1.00' });
    const response = await price(funded.key);
    expect(response.statusCode).toBe(503);
    expect(venues.requests.length).toBeGreaterThan(0);
  });

  it('an unfunded live key asking a price: 402 at once, no venue called, no ledger row', async () => {
    const unfunded = await ctx.createAccount({ mode: 'live', balanceUsd: '0' });
    const response = await price(unfunded.key);
    expect(response.statusCode).toBe(402);
    refusal(response, '0.01', '0.00');
    expect(venues.requests).toHaveLength(0);
    const [rows] = await ctx.database.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM ledger_entries WHERE account_id = $1',
      [unfunded.accountId],
    );
    expect(rows?.n).toBe(0);
  });

  it('the batch (with and without a key) and the history: 402, no venue called, no key taken', async () => {
    const unfunded = await ctx.createAccount({ mode: 'live', balanceUsd: '0' });
    const plain = await batch(unfunded.key, ['SOL', 'BTC', 'ETH']);
    expect(plain.statusCode).toBe(402);
    // Refused before it is priced: the least a batch can cost (0.05 + one symbol).
    refusal(plain, '0.06', '0.00');
    const keyed = await batch(unfunded.key, ['SOL'], 'unfunded-1');
    expect(keyed.statusCode).toBe(402);
    refusal(keyed, '0.06', '0.00');
    const past = await history(unfunded.key);
    expect(past.statusCode).toBe(402);
    refusal(past, '0.05', '0.00');
    expect(venues.requests).toHaveLength(0);
    expect(await countEntries(ctx.database.db, unfunded.accountId, 'charge')).toBe(0);
    const keys = await ctx.database.db.query('SELECT 1 FROM idempotency_keys WHERE account_id = $1', [
      unfunded.accountId,
    ]);
    expect(keys).toHaveLength(0);
  });

  it('a balance short of the least a batch costs is refused before any venue; enough for one price is not', async () => {
    const short = await ctx.createAccount({ mode: 'live', balanceUsd: '0.05' });
    const refused = await batch(short.key, ['SOL']);
    expect(refused.statusCode).toBe(402);
    refusal(refused, '0.06', '0.05');
    expect(venues.requests).toHaveLength(0);
    // 0.05 pays a single price: that request goes to the venues (which are down: not charged).
    expect((await price(short.key)).statusCode).toBe(503);
    expect(venues.requests.length).toBeGreaterThan(0);
    expect(await balanceOf(ctx.database.db, short.accountId)).toBe(50_000n);
  });

  it('the last of the balance spent, the next request is refused without a venue; a deposit lifts it at once', async () => {
    const account = await ctx.createAccount({ mode: 'sandbox', balanceUsd: '0.01' });
    expect((await price(account.key)).statusCode).toBe(200);
    const spent = await price(account.key);
    expect(spent.statusCode).toBe(402);
    refusal(spent, '0.01', '0.00');
    await creditDeposit(createContext(ctx.database.db, ctx.clock), {
      accountId: account.accountId,
      amountMicros: 20_000n,
      reference: `balance-before-work-${account.accountId}`,
    });
    // No waiting for any cache: the balance this process saw last was short, so it reads it again.
    const paid = await price(account.key);
    expect(paid.statusCode).toBe(200);
    expect(paid.json().remainingBalanceUsd).toBe('0.01');
    expect(venues.requests).toHaveLength(0);
  });

  it('a keyed retry of the request that spent the last of the balance gets its answer, not a refusal', async () => {
    const account = await ctx.createAccount({ mode: 'sandbox', balanceUsd: '0.06' });
    const first = await batch(account.key, ['SOL'], 'last-of-it');
    expect(first.statusCode).toBe(200);
    expect(first.json().remainingBalanceUsd).toBe('0.00');
    const retry = await batch(account.key, ['SOL'], 'last-of-it');
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toBe(first.body);
    // A different request under that key is still told so, not refused for the balance.
    const reused = await batch(account.key, ['BTC'], 'last-of-it');
    expect(reused.statusCode).toBe(422);
    expect(reused.json().code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(1);
  });

  it('a route billed in its transaction: an unfunded schedule is refused before its claim, and its keyed retry replays', async () => {
    const unfunded = await ctx.createAccount({ mode: 'sandbox', balanceUsd: '0' });
    const body = {
      symbol: 'SOL',
      resolutionTimestamp: new Date(ctx.clock.now().getTime() + 3_600_000).toISOString(),
      callbackUrl: 'https://hooks.example.com/sibyl',
    };
    const schedule = (key: string, idempotencyKey: string) =>
      ctx.request(key, {
        method: 'POST',
        url: '/api/v1/price/schedule',
        payload: body,
        headers: { 'idempotency-key': idempotencyKey },
      });
    const refused = await schedule(unfunded.key, 'schedule-1');
    expect(refused.statusCode).toBe(402);
    refusal(refused, '0.05', '0.00');
    const keys = await ctx.database.db.query('SELECT 1 FROM idempotency_keys WHERE account_id = $1', [
      unfunded.accountId,
    ]);
    expect(keys).toHaveLength(0);

    const exact = await ctx.createAccount({ mode: 'sandbox', balanceUsd: '0.05' });
    const first = await schedule(exact.key, 'schedule-2');
    expect(first.statusCode).toBe(200);
    const retry = await schedule(exact.key, 'schedule-2');
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toBe(first.body);
  });
});
