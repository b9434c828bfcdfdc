import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { generateSecret } from '../../src/attestations/keys.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import {
  type FakeRequest,
  type FakeResponse,
  type FakeServer,
  startFakeServer,
} from '../helpers/fake-server.js';
import { countEntries, expectLedgerReconciles } from '../helpers/ledger.js';

/**
 * Live pricing end to end: the configured registry builds real adapters pointed at one local server
 * that answers like Binance, Coinbase, Kraken and OKX (their public wire formats), so configuration,
 * adapters, caching, coalescing, the circuit breaker, aggregation and billing are tested together.
 */

let ctx: TestContext;
let venues: FakeServer;
let live: TestAccount;
let sandbox: TestAccount;
let behaviour: Partial<Record<'binance' | 'coinbase' | 'kraken' | 'okx', (r: FakeRequest) => FakeResponse>> =
  {};
let inFlight = 0;
let maxInFlight = 0;
let barrier: { arrive(inFlight: number): Promise<void> } | null = null;

/** Holds requests until `size` are in flight together; gives up after `giveUpMs` (then the test fails). */
function holdUntilInFlight(size: number, giveUpMs: number) {
  const waiting: (() => void)[] = [];
  const release = () => {
    for (const resume of waiting.splice(0)) resume();
  };
  const timer = setTimeout(release, giveUpMs);
  return {
    arrive(now: number) {
      const held = new Promise<void>((resolve) => waiting.push(resolve));
      if (now >= size) {
        clearTimeout(timer);
        release();
      }
      return held;
    },
  };
}

const quotes = { binance: 150.1, coinbase: 150.2, kraken: 150.3, okx: 150.4 };
const volumesUsd = { binance: 1_000_000, coinbase: 1_502_000, kraken: 3_005_000, okx: 2_000_000 };

function venueOf(path: string): keyof typeof quotes {
  if (path.startsWith('/api/v3/')) return 'binance';
  if (path.startsWith('/products/')) return 'coinbase';
  if (path.startsWith('/0/public/')) return 'kraken';
  return 'okx';
}

function healthy(venue: keyof typeof quotes, nowMs: number): FakeResponse {
  switch (venue) {
    case 'binance':
      return {
        body: {
          symbol: 'SOLUSDT',
          lastPrice: '150.10000000',
          volume: '6662.22518321',
          quoteVolume: '1000000.00000000',
          openTime: nowMs - 86_400_000,
          closeTime: nowMs,
          count: 76,
        },
      };
    case 'coinbase':
      return {
        body: {
          ask: '150.21',
          bid: '150.19',
          volume: '10000.00000000',
          trade_id: 1040406588,
          price: '150.20',
          size: '0.5',
          time: new Date(nowMs).toISOString(),
        },
      };
    case 'kraken':
      return {
        body: {
          error: [],
          result: {
            SOLUSD: {
              a: ['150.31000', '1', '1.000'],
              b: ['150.29000', '1', '1.000'],
              c: ['150.30000', '0.5'],
              v: ['10000.00000000', '20000.00000000'],
              p: ['150.20000', '150.25000'],
              t: [3000, 6000],
              l: ['148.0', '147.5'],
              h: ['152.0', '152.5'],
              o: '149.00000',
            },
          },
        },
      };
    case 'okx':
      return {
        body: {
          code: '0',
          msg: '',
          data: [
            {
              instType: 'SPOT',
              instId: 'SOL-USDT',
              last: '150.4',
              volCcy24h: '2000000',
              vol24h: '13300.5',
              ts: String(nowMs),
            },
          ],
        },
      };
  }
}

beforeAll(async () => {
  venues = await startFakeServer(async (request) => {
    const venue = venueOf(request.url.pathname);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    // Parallelism is shown by overlap, not by timing: while a barrier is set, a request is held
    // until that many are in flight at once (calls made one after the other never get there).
    if (barrier !== null) await barrier.arrive(inFlight);
    inFlight--;
    return behaviour[venue]?.(request) ?? healthy(venue, ctx.clock.now().getTime());
  });
  ctx = await createTestContext({
    config: {
      PRICE_VENUES: 'binance,coinbase,kraken,okx',
      BINANCE_BASE_URL: venues.url,
      COINBASE_BASE_URL: venues.url,
      KRAKEN_BASE_URL: venues.url,
      OKX_BASE_URL: venues.url,
      // Answers of the local fake venues never come near it, however loaded the machine; the
      // timeout itself is exercised with a venue that never answers.
      PRICE_VENUE_TIMEOUT_MS: '3000',
      PRICE_CACHE_TTL_MS: '2000',
      PRICE_ERROR_CACHE_TTL_MS: '0',
      PRICE_BREAKER_FAILURES: '3',
      PRICE_BREAKER_COOLDOWN_MS: '30000',
      ATTESTATION_SECRET_KEY: generateSecret(),
    },
  });
  live = await ctx.createAccount({ mode: 'live', balanceUsd: '10.00' });
  sandbox = await ctx.createAccount({ mode: 'sandbox', balanceUsd: '10.00' });
});

afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
  await venues.close();
});

beforeEach(() => {
  behaviour = {};
  // Step past every cached quote so each test starts cold.
  ctx.clock.advance(60_000);
  venues.requests.length = 0;
  maxInFlight = 0;
  barrier = null;
});

const price = (key: string, symbol = 'SOL') =>
  ctx.request(key, { method: 'GET', url: `/api/v1/price/${symbol}` });

describe('live prices', () => {
  it('asks every venue in parallel and returns the VWAP of their quotes', async () => {
    barrier = holdUntilInFlight(4, 2_500);
    const response = await price(live.key);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    const names = ['binance', 'coinbase', 'kraken', 'okx'] as const;
    const expected =
      names.reduce((s, n) => s + quotes[n] * volumesUsd[n], 0) / names.reduce((s, n) => s + volumesUsd[n], 0);
    expect(body.vwapPrice).toBeCloseTo(expected, 9);
    expect(body.sources.map((s: { name: string; volume24h: number }) => [s.name, s.volume24h])).toEqual(
      names.map((n) => [n, volumesUsd[n]]),
    );
    expect(body).toMatchObject({ sourceCount: 4, isValid: true, costUsd: '0.01', unavailableSources: [] });
    expect(maxInFlight).toBe(4);
    expect(venues.requests.map((r) => `${r.url.pathname}${r.url.search}`).sort()).toEqual([
      '/0/public/Ticker?pair=SOLUSD',
      '/api/v3/ticker/24hr?symbol=SOLUSDT',
      '/api/v5/market/ticker?instId=SOL-USDT',
      '/products/SOL-USD/ticker',
    ]);
  });

  it('200 concurrent requests for SOL make exactly one call per venue', async () => {
    const responses = await Promise.all(Array.from({ length: 200 }, () => price(live.key)));
    expect(responses.every((r) => r.statusCode === 200)).toBe(true);
    for (const prefix of ['/api/v3/', '/products/', '/0/public/', '/api/v5/'])
      expect(venues.count(prefix)).toBe(1);
    // Within the cache lifetime, no venue is asked again.
    await price(live.key);
    expect(venues.requests).toHaveLength(4);
  });

  it('a slow venue is cut off at its timeout and named; the others still price', async () => {
    behaviour.kraken = () => ({ hang: true });
    const body = (await price(live.key)).json();
    expect(body.unavailableSources).toEqual([{ name: 'kraken', reason: 'timeout' }]);
    expect(body).toMatchObject({ sourceCount: 3, isValid: true });
  });

  it('every venue failing → 503 PRICE_UNAVAILABLE, not charged', async () => {
    const charges = await countEntries(ctx.database.db, live.accountId, 'charge');
    behaviour = {
      binance: () => ({
        status: 451,
        body: { code: 0, msg: 'Service unavailable from a restricted location' },
      }),
      coinbase: () => ({ status: 503, body: { message: 'down' } }),
      kraken: () => ({ body: { error: ['EAPI:Rate limit exceeded'] } }),
      okx: () => ({
        status: 429,
        headers: { 'retry-after': '1' },
        body: { code: '50011', msg: 'Too Many Requests' },
      }),
    };
    const response = await price(live.key, 'ETH');
    expect(response.statusCode).toBe(503);
    expect(response.headers['retry-after']).toBe('5');
    expect(response.json()).toEqual({
      error: 'No price source could price ETH right now; retry shortly',
      code: 'PRICE_UNAVAILABLE',
      details: {
        unavailableSources: [
          { name: 'binance', reason: 'geo_blocked' },
          { name: 'coinbase', reason: 'http_error' },
          { name: 'kraken', reason: 'rate_limited' },
          { name: 'okx', reason: 'rate_limited' },
        ],
      },
      requestId: response.headers['x-request-id'],
    });
    expect(await countEntries(ctx.database.db, live.accountId, 'charge')).toBe(charges);
  });

  it('a venue that keeps failing is skipped for a while, and the answer says so', async () => {
    // A success first: the breaker counts consecutive failures.
    expect((await price(live.key, 'BTC')).json().unavailableSources).toEqual([]);
    ctx.clock.advance(3_000);
    behaviour.coinbase = () => ({ status: 500, body: { message: 'Internal' } });
    for (let i = 0; i < 3; i++) {
      const body = (await price(live.key, 'BTC')).json();
      expect(body.unavailableSources).toEqual([{ name: 'coinbase', reason: 'http_error' }]);
      ctx.clock.advance(3_000);
    }
    const before = venues.count('/products/');
    const body = (await price(live.key, 'BTC')).json();
    expect(body.unavailableSources).toEqual([
      { name: 'coinbase', reason: 'circuit_open', retryAt: expect.any(String) },
    ]);
    expect(venues.count('/products/')).toBe(before);
    // After the cool-down the venue is tried again, and a success closes the circuit.
    behaviour = {};
    ctx.clock.advance(30_000);
    expect((await price(live.key, 'BTC')).json().unavailableSources).toEqual([]);
  });

  it('sandbox accounts never reach a live venue', async () => {
    const response = await price(sandbox.key);
    expect(response.statusCode).toBe(200);
    expect(response.json().sources.every((s: { name: string }) => s.name.startsWith('sandbox-'))).toBe(true);
    expect(venues.requests).toHaveLength(0);
  });

  it('prices a batch from every venue once per token, charging 0.05 + 0.01 × 2', async () => {
    const body = (
      await ctx.request(live.key, {
        method: 'POST',
        url: '/api/v1/price/batch',
        payload: { symbols: ['SOL', 'sol', 'ETH'] },
      })
    ).json();
    expect(body.prices.map((p: { symbol: string }) => p.symbol)).toEqual(['SOL', 'ETH']);
    expect(body.costUsd).toBe('0.07');
    expect(venues.count('/api/v3/')).toBe(2);
  });
});

describe('a venue figure beyond the range of a double', () => {
  /** Binance's healthy ticker with some of its fields replaced (numbers are strings on Binance). */
  const binance =
    (fields: Record<string, string>): ((r: FakeRequest) => FakeResponse) =>
    () => {
      const answer = healthy('binance', ctx.clock.now().getTime());
      return { body: { ...(answer.body as object), ...fields } };
    };
  const down = (): FakeResponse => ({ status: 503, body: { message: 'down' } });

  it('a volume of 1e308 is a dropped source (out_of_range): the others make a valid, finite VWAP', async () => {
    behaviour.binance = binance({ quoteVolume: '1e308' });
    const response = await price(live.key);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    const kept = ['coinbase', 'kraken', 'okx'] as const;
    const expected =
      kept.reduce((s, n) => s + quotes[n] * volumesUsd[n], 0) / kept.reduce((s, n) => s + volumesUsd[n], 0);
    expect(body.vwapPrice).toBeCloseTo(expected, 9);
    expect(body).toMatchObject({ sourceCount: 3, isValid: true, costUsd: '0.01' });
    expect(body.sources[0]).toMatchObject({
      name: 'binance',
      used: false,
      status: 'out_of_range',
      volume24h: 1e308,
    });
  });

  it('a price of 1e308 beside one good quote: not valid, priced from the good one, and attest=true signs it', async () => {
    behaviour = { binance: binance({ lastPrice: '1e308' }), kraken: down, okx: down };
    const response = await ctx.request(live.key, { method: 'GET', url: '/api/v1/price/SOL?attest=true' });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ vwapPrice: 150.2, sourceCount: 1, isValid: false, costUsd: '0.015' });
    expect(body.sources.map((s: { name: string; status: string }) => [s.name, s.status])).toEqual([
      ['binance', 'out_of_range'],
      ['coinbase', 'used'],
    ]);
    expect(body.attestation).toMatchObject({ version: 1, message: expect.any(String) });
  });

  it('every quote out of range: a finite price, not valid; the batch signs it too', async () => {
    behaviour = {
      binance: binance({ lastPrice: '1e308' }),
      coinbase: () => ({
        body: { price: '1.7e308', volume: '10', time: new Date(ctx.clock.now().getTime()).toISOString() },
      }),
      kraken: down,
      okx: down,
    };
    const response = await ctx.request(live.key, {
      method: 'POST',
      url: '/api/v1/price/batch?attest=true',
      payload: { symbols: ['SOL'] },
    });
    expect(response.statusCode).toBe(200);
    const [item] = response.json().prices;
    expect(item).toMatchObject({ symbol: 'SOL', sourceCount: 0, isValid: false });
    expect(item.vwapPrice).toBe(1.35e308);
    expect(item.attestation).toMatchObject({ version: 1 });
  });
});
