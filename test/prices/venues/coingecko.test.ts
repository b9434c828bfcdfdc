import { describe, expect, it } from 'vitest';
import { type PriceTarget, parseTarget } from '../../../src/prices/tokens.js';
import { VenueError, type VenueFailure } from '../../../src/prices/types.js';
import { createCoinGeckoVenue } from '../../../src/prices/venues/coingecko.js';
import { signal, target, useVenueServer } from './kit.js';

const UNKNOWN_MINT = '7GCihgDB8fe6KNjn2MYtkzZcRjQy3t9GHdC8uHYmW2hr';
const HOUR = 3_600_000;
const DAY = 86_400_000;

async function venueError(promise: Promise<unknown>, kind: VenueFailure): Promise<VenueError> {
  const error = await promise.then(
    () => {
      throw new Error('expected a VenueError');
    },
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(VenueError);
  expect((error as VenueError).kind).toBe(kind);
  return error as VenueError;
}

const server = useVenueServer();

describe('CoinGecko quotes', () => {
  it('prices a listed token from /simple/price with volume and a seconds timestamp', async () => {
    server.setHandler(() => ({
      body: {
        solana: {
          usd: 147.23,
          usd_market_cap: 69876543210.12,
          usd_24h_vol: 3456789012.5,
          usd_24h_change: 1.93,
          last_updated_at: 1717000000,
        },
      },
    }));
    const venue = createCoinGeckoVenue({ baseUrl: server.url, timeoutMs: 10_000, apiKey: 'cg-demo-key' });
    expect(venue.name).toBe('coingecko');
    expect(venue.role).toBe('market');

    const quote = await venue.fetchQuote(target('SOL'), signal);

    expect(quote).toEqual({
      price: 147.23,
      volume24hUsd: 3456789012.5,
      timestamp: new Date('2024-05-29T16:26:40.000Z'),
    });
    expect(server.requests).toHaveLength(1);
    const request = server.requests[0];
    expect(request?.url.pathname).toBe('/simple/price');
    expect(Object.fromEntries(request?.url.searchParams ?? [])).toEqual({
      ids: 'solana',
      vs_currencies: 'usd',
      include_24hr_vol: 'true',
      include_last_updated_at: 'true',
    });
    expect(request?.headers['x-cg-demo-api-key']).toBe('cg-demo-key');
    expect(request?.headers['x-cg-pro-api-key']).toBeUndefined();
  });

  it('sends the pro header on the pro plan and no key header without a key', async () => {
    server.setHandler(() => ({ body: { bitcoin: { usd: 67187.3358936566 } } }));
    const pro = createCoinGeckoVenue({
      baseUrl: server.url,
      timeoutMs: 10_000,
      apiKey: 'cg-pro',
      plan: 'pro',
    });
    const keyless = createCoinGeckoVenue({ baseUrl: server.url, timeoutMs: 10_000 });

    expect(await pro.fetchQuote(target('BTC'), signal)).toEqual({
      price: 67187.3358936566,
      volume24hUsd: null,
      timestamp: null,
    });
    await keyless.fetchQuote(target('BTC'), signal);

    expect(server.requests[0]?.headers['x-cg-pro-api-key']).toBe('cg-pro');
    expect(server.requests[0]?.headers['x-cg-demo-api-key']).toBeUndefined();
    expect(server.requests[1]?.headers['x-cg-pro-api-key']).toBeUndefined();
    expect(server.requests[1]?.headers['x-cg-demo-api-key']).toBeUndefined();
  });

  it('returns null when the id is absent from the answer or the coin is not found', async () => {
    const venue = createCoinGeckoVenue({ baseUrl: server.url, timeoutMs: 10_000 });
    server.setHandler(() => ({ body: {} }));
    expect(await venue.fetchQuote(target('ORCA'), signal)).toBeNull();
    server.setHandler(() => ({ status: 404, body: { error: 'coin not found' } }));
    expect(await venue.fetchQuote(target('ORCA'), signal)).toBeNull();
  });

  it('prices an unknown mint through /simple/token_price/solana, matching the key case-insensitively', async () => {
    const parsed = parseTarget(UNKNOWN_MINT);
    expect(parsed).toEqual({
      kind: 'target',
      target: { key: UNKNOWN_MINT, token: null, mint: UNKNOWN_MINT },
    });
    server.setHandler(() => ({
      body: {
        [UNKNOWN_MINT.toLowerCase()]: { usd: 0.01234, usd_24h_vol: 98765.4, last_updated_at: 1711356300 },
      },
    }));
    const venue = createCoinGeckoVenue({ baseUrl: server.url, timeoutMs: 10_000, apiKey: 'k' });

    expect(venue.canPrice(target(UNKNOWN_MINT))).toBe(true);
    expect(await venue.fetchQuote(target(UNKNOWN_MINT), signal)).toEqual({
      price: 0.01234,
      volume24hUsd: 98765.4,
      timestamp: new Date(1711356300 * 1000),
    });
    const request = server.requests[0];
    expect(request?.url.pathname).toBe('/simple/token_price/solana');
    expect(Object.fromEntries(request?.url.searchParams ?? [])).toEqual({
      contract_addresses: UNKNOWN_MINT,
      vs_currencies: 'usd',
      include_24hr_vol: 'true',
      include_last_updated_at: 'true',
    });
    expect(request?.headers['x-cg-demo-api-key']).toBe('k');

    server.setHandler(() => ({ body: {} }));
    expect(await venue.fetchQuote(target(UNKNOWN_MINT), signal)).toBeNull();
  });

  it('can price listed tokens and mints, but not a target with neither', () => {
    const venue = createCoinGeckoVenue({ baseUrl: server.url, timeoutMs: 10_000 });
    expect(venue.canPrice(target('USDT'))).toBe(true);
    const bare: PriceTarget = {
      key: 'NOPE',
      token: { symbol: 'NOPE', name: 'Nope', mint: UNKNOWN_MINT, decimals: 6, markets: {} },
      mint: null,
    };
    expect(venue.canPrice(bare)).toBe(false);
  });

  it('classifies 429 with Retry-After as rate_limited', async () => {
    server.setHandler(() => ({
      status: 429,
      headers: { 'retry-after': '30' },
      body: {
        status: {
          error_code: 429,
          error_message:
            "You've exceeded the Rate Limit. Please visit https://www.coingecko.com/en/api/pricing",
        },
      },
    }));
    const venue = createCoinGeckoVenue({ baseUrl: server.url, timeoutMs: 10_000 });
    const error = await venueError(venue.fetchQuote(target('SOL'), signal), 'rate_limited');
    expect(error.retryAfterMs).toBe(30_000);
  });

  it('reads each of CoinGecko’s error body shapes', async () => {
    const venue = createCoinGeckoVenue({ baseUrl: server.url, timeoutMs: 10_000, apiKey: 'wrong-host' });

    server.setHandler(() => ({
      status: 401,
      body: {
        status: { error_code: 10010, error_message: 'If you are using Pro API key, use pro-api host' },
      },
    }));
    const wrongHost = await venueError(venue.fetchQuote(target('SOL'), signal), 'http_error');
    expect(wrongHost.message).toBe(
      'coingecko: HTTP 401: 10010 If you are using Pro API key, use pro-api host',
    );

    server.setHandler(() => ({
      status: 401,
      body: { error: { status: { error_code: 10002, error_message: 'API Key Missing' } } },
    }));
    const missing = await venueError(venue.fetchQuote(target('SOL'), signal), 'http_error');
    expect(missing.message).toBe('coingecko: HTTP 401: 10002 API Key Missing');

    server.setHandler(() => ({
      status: 401,
      body: { status: { error_code: 429, error_message: "You've exceeded the Rate Limit." } },
    }));
    await venueError(venue.fetchQuote(target('SOL'), signal), 'rate_limited');

    server.setHandler(() => ({
      status: 403,
      headers: { 'content-type': 'text/html' },
      body: '<!DOCTYPE html><html><title>Attention Required! | Cloudflare</title></html>',
    }));
    const blocked = await venueError(venue.fetchQuote(target('SOL'), signal), 'http_error');
    expect(blocked.message).toBe('coingecko: HTTP 403');

    server.setHandler(() => ({ status: 400, body: { error: 'invalid vs_currency' } }));
    await venueError(venue.fetchQuote(target('SOL'), signal), 'http_error');

    server.setHandler(() => ({ status: 503, body: { status: { error_code: 503, error_message: 'busy' } } }));
    await venueError(venue.fetchQuote(target('SOL'), signal), 'http_error');
  });

  it('rejects malformed bodies as bad_response', async () => {
    const venue = createCoinGeckoVenue({ baseUrl: server.url, timeoutMs: 10_000 });
    for (const body of [
      '<html>maintenance</html>',
      [{ solana: { usd: 1 } }],
      { solana: 'fast' },
      { solana: { usd: 'n/a' } },
      { solana: { usd: -3 } },
      { solana: { usd: 147, usd_24h_vol: 'lots' } },
    ]) {
      server.setHandler(() => ({ body }));
      await venueError(venue.fetchQuote(target('SOL'), signal), 'bad_response');
    }
  });

  it('times out a slow answer', async () => {
    server.setHandler(() => ({ hang: true }));
    const venue = createCoinGeckoVenue({ baseUrl: server.url, timeoutMs: 300 });
    await venueError(venue.fetchQuote(target('SOL'), signal), 'timeout');
  });
});

describe('CoinGecko candles', () => {
  const jan1 = Date.UTC(2024, 0, 1);

  it('serves 1h, 4h and 1d for tokens with a coin id only', () => {
    const venue = createCoinGeckoVenue({ baseUrl: server.url, timeoutMs: 10_000 });
    expect(venue.canServeCandles(target('SOL'), '1h')).toBe(true);
    expect(venue.canServeCandles(target('SOL'), '4h')).toBe(true);
    expect(venue.canServeCandles(target('SOL'), '1d')).toBe(true);
    expect(venue.canServeCandles(target('SOL'), '1m')).toBe(false);
    expect(venue.canServeCandles(target('SOL'), '5m')).toBe(false);
    expect(venue.canServeCandles(target('SOL'), '15m')).toBe(false);
    expect(venue.canServeCandles(target(UNKNOWN_MINT), '1d')).toBe(false);
  });

  it('builds UTC buckets from points: first/last/max/min, only buckets starting in [start, end)', async () => {
    server.setHandler(() => ({
      body: {
        prices: [
          [jan1 - HOUR + 41_000, 50],
          [jan1 + 41_331, 100],
          [jan1 + HOUR + 30_000, 104],
          [jan1 + 2 * HOUR + 12_000, 98],
          [jan1 + 3 * HOUR + 5_000, 101],
          [jan1 + 4 * HOUR + 41_000, 102],
          [jan1 + 5 * HOUR + 7_000, 103.5],
          [jan1 + 8 * HOUR + 10_000, 60],
        ],
        market_caps: [[jan1 + 41_331, 827596236151.196]],
        total_volumes: [[jan1 + 41_331, 14305769170.9498]],
      },
    }));
    const venue = createCoinGeckoVenue(
      { baseUrl: server.url, timeoutMs: 10_000 },
      { now: () => new Date(jan1 + 9 * DAY) },
    );

    const candles = await venue.fetchCandles(
      target('SOL'),
      '4h',
      new Date(jan1),
      new Date(jan1 + 8 * HOUR),
      signal,
    );

    expect(candles).toEqual([
      { openTime: new Date(jan1), open: 100, high: 104, low: 98, close: 101, volumeUsd: null, closed: true },
      {
        openTime: new Date(jan1 + 4 * HOUR),
        open: 102,
        high: 103.5,
        low: 102,
        close: 103.5,
        volumeUsd: null,
        closed: true,
      },
    ]);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.url.pathname).toBe('/coins/solana/market_chart/range');
    expect(Object.fromEntries(server.requests[0]?.url.searchParams ?? [])).toEqual({
      vs_currency: 'usd',
      from: '1704067200',
      to: '1704096000',
    });
  });

  it('marks the current bucket open, skips buckets before an unaligned start and stops at now', async () => {
    server.setHandler(() => ({
      body: {
        prices: [
          [jan1 + HOUR + 10_000, 10],
          [jan1 + 2 * HOUR + 10_000, 11],
          [jan1 + 2 * HOUR + 1_800_000, 12],
          [jan1 + 3 * HOUR + 10_000, 13],
        ],
        total_volumes: [],
      },
    }));
    const now = jan1 + 3 * HOUR + 1_800_000;
    const venue = createCoinGeckoVenue(
      { baseUrl: server.url, timeoutMs: 10_000 },
      { now: () => new Date(now) },
    );

    const candles = await venue.fetchCandles(
      target('SOL'),
      '1h',
      new Date(jan1 + 1.5 * HOUR),
      new Date(jan1 + 6 * HOUR),
      signal,
    );

    expect(candles).toEqual([
      {
        openTime: new Date(jan1 + 2 * HOUR),
        open: 11,
        high: 12,
        low: 11,
        close: 12,
        volumeUsd: null,
        closed: true,
      },
      {
        openTime: new Date(jan1 + 3 * HOUR),
        open: 13,
        high: 13,
        low: 13,
        close: 13,
        volumeUsd: null,
        closed: false,
      },
    ]);
    expect(Object.fromEntries(server.requests[0]?.url.searchParams ?? [])).toEqual({
      vs_currency: 'usd',
      from: String((jan1 + 2 * HOUR) / 1000),
      to: String(now / 1000),
    });
  });

  it('pages over more than 90 days in 90-day windows, oldest first', async () => {
    // Hourly points priced at hours since Jan 1, from `from` to `to` inclusive, as CoinGecko does.
    server.setHandler((request) => {
      const from = Number(request.url.searchParams.get('from')) * 1000;
      const to = Number(request.url.searchParams.get('to')) * 1000;
      const prices: [number, number][] = [];
      for (let t = from; t <= to; t += HOUR) prices.push([t, (t - jan1) / HOUR]);
      return { body: { prices, market_caps: [], total_volumes: [] } };
    });
    const venue = createCoinGeckoVenue(
      { baseUrl: server.url, timeoutMs: 10_000 },
      { now: () => new Date(Date.UTC(2025, 0, 1)) },
    );
    const end = Date.UTC(2024, 6, 1);

    const candles = await venue.fetchCandles(target('BTC'), '1d', new Date(jan1), new Date(end), signal);

    expect(
      server.requests.map((r) => [r.url.searchParams.get('from'), r.url.searchParams.get('to')]),
    ).toEqual([
      ['1704067200', '1711843200'],
      ['1711843200', '1719619200'],
      ['1719619200', '1719792000'],
    ]);
    expect(server.count('/coins/bitcoin/market_chart/range')).toBe(3);
    expect(candles).toHaveLength(182);
    for (const [day, candle] of (candles ?? []).entries()) {
      expect(candle).toEqual({
        openTime: new Date(jan1 + day * DAY),
        open: day * 24,
        high: day * 24 + 23,
        low: day * 24,
        close: day * 24 + 23,
        volumeUsd: null,
        closed: true,
      });
    }
  });

  it('returns null for an unknown coin or an unserved interval, and bad_response for a broken chart', async () => {
    const venue = createCoinGeckoVenue(
      { baseUrl: server.url, timeoutMs: 10_000 },
      { now: () => new Date(jan1 + DAY) },
    );
    const start = new Date(jan1);
    const end = new Date(jan1 + 4 * HOUR);

    expect(await venue.fetchCandles(target('SOL'), '5m', start, end, signal)).toBeNull();
    expect(await venue.fetchCandles(target(UNKNOWN_MINT), '1h', start, end, signal)).toBeNull();
    expect(server.requests).toHaveLength(0);

    server.setHandler(() => ({ status: 404, body: { error: 'coin not found' } }));
    expect(await venue.fetchCandles(target('RAY'), '1h', start, end, signal)).toBeNull();

    server.setHandler(() => ({ body: { prices: [[jan1, '42261.04']] } }));
    await venueError(venue.fetchCandles(target('RAY'), '1h', start, end, signal), 'bad_response');
    server.setHandler(() => ({ body: { error: 'something' } }));
    await venueError(venue.fetchCandles(target('RAY'), '1h', start, end, signal), 'bad_response');
  });
});
