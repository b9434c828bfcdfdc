import { describe, expect, it } from 'vitest';
import { parseTarget } from '../../../src/prices/tokens.js';
import { createJupiterVenue } from '../../../src/prices/venues/jupiter.js';
import { signal, target, useVenueServer } from './kit.js';

const SOL = 'So11111111111111111111111111111111111111112';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const UNKNOWN_MINT = '7GCihgDB8fe6KNjn2MYtkzZcRjQy3t9GHdC8uHYmW2hr';

const server = useVenueServer();
const baseUrl = (): string => `${server.url}/price/v3`;

describe('Jupiter Price v3', () => {
  it('reads usdPrice from the entry keyed by mint, with no volume or timestamp', async () => {
    server.setHandler(() => ({
      body: {
        [SOL]: {
          createdAt: '2024-06-05T08:55:25.527Z',
          liquidity: 621679197.67,
          usdPrice: 147.48,
          blockId: 348004023,
          decimals: 9,
          priceChange24h: 1.29,
        },
      },
    }));
    const venue = createJupiterVenue({ baseUrl: baseUrl(), timeoutMs: 10_000, apiKey: 'jup-key' });
    expect(venue.name).toBe('jupiter');
    expect(venue.role).toBe('reference');

    expect(await venue.fetchQuote(target('SOL'), signal)).toEqual({
      price: 147.48,
      volume24hUsd: null,
      timestamp: null,
    });
    expect(server.requests).toHaveLength(1);
    const request = server.requests[0];
    expect(request?.url.pathname).toBe('/price/v3');
    expect(Object.fromEntries(request?.url.searchParams ?? [])).toEqual({ ids: SOL });
    expect(request?.headers['x-api-key']).toBe('jup-key');
  });

  it('sends no key header when no key is configured', async () => {
    server.setHandler(() => ({
      body: {
        [USDC]: { createdAt: '2024-06-05T08:55:25.527Z', usdPrice: 0.9999, blockId: 348004025, decimals: 6 },
      },
    }));
    const venue = createJupiterVenue({ baseUrl: `${baseUrl()}/`, timeoutMs: 10_000 });
    expect((await venue.fetchQuote(target('USDC'), signal))?.price).toBe(0.9999);
    expect(server.requests[0]?.url.pathname).toBe('/price/v3');
    expect(server.requests[0]?.headers['x-api-key']).toBeUndefined();
  });

  it('prices an unknown mint, and returns null when the mint is omitted', async () => {
    expect(parseTarget(UNKNOWN_MINT)).toEqual({
      kind: 'target',
      target: { key: UNKNOWN_MINT, token: null, mint: UNKNOWN_MINT },
    });
    const venue = createJupiterVenue({ baseUrl: baseUrl(), timeoutMs: 10_000 });
    expect(venue.canPrice(target(UNKNOWN_MINT))).toBe(true);

    server.setHandler(() => ({
      body: { [UNKNOWN_MINT]: { usdPrice: 0.000412, liquidity: 15000.5, blockId: 348004100, decimals: 6 } },
    }));
    expect(await venue.fetchQuote(target(UNKNOWN_MINT), signal)).toEqual({
      price: 0.000412,
      volume24hUsd: null,
      timestamp: null,
    });
    expect(server.requests[0]?.url.searchParams.get('ids')).toBe(UNKNOWN_MINT);

    server.setHandler(() => ({ body: {} }));
    expect(await venue.fetchQuote(target(UNKNOWN_MINT), signal)).toBeNull();
  });

  it('cannot price a target without a mint', () => {
    const venue = createJupiterVenue({ baseUrl: baseUrl(), timeoutMs: 10_000 });
    expect(venue.canPrice({ key: 'X', token: null, mint: null })).toBe(false);
    expect(venue.canPrice(target('BONK'))).toBe(true);
  });

  it('classifies 429 with Retry-After as rate_limited and 401 as http_error', async () => {
    const venue = createJupiterVenue({ baseUrl: baseUrl(), timeoutMs: 10_000 });
    server.setHandler(() => ({ status: 429, headers: { 'retry-after': '12' }, body: 'Too Many Requests' }));
    await expect(venue.fetchQuote(target('SOL'), signal)).rejects.toMatchObject({
      name: 'VenueError',
      kind: 'rate_limited',
      retryAfterMs: 12_000,
    });
    server.setHandler(() => ({ status: 401, body: 'Unauthorized' }));
    await expect(venue.fetchQuote(target('SOL'), signal)).rejects.toMatchObject({
      name: 'VenueError',
      kind: 'http_error',
    });
  });

  it('rejects malformed bodies as bad_response', async () => {
    const venue = createJupiterVenue({ baseUrl: baseUrl(), timeoutMs: 10_000 });
    for (const body of [
      'not json',
      [{ usdPrice: 147 }],
      { [SOL]: 147.48 },
      { [SOL]: { usdPrice: 'cheap' } },
      { [SOL]: { liquidity: 5 } },
      { [SOL]: { usdPrice: 0 } },
    ]) {
      server.setHandler(() => ({ body }));
      await expect(venue.fetchQuote(target('SOL'), signal)).rejects.toMatchObject({
        name: 'VenueError',
        kind: 'bad_response',
      });
    }
  });

  it('times out a slow answer', async () => {
    server.setHandler(() => ({ hang: true }));
    const venue = createJupiterVenue({ baseUrl: baseUrl(), timeoutMs: 300 });
    await expect(venue.fetchQuote(target('SOL'), signal)).rejects.toMatchObject({
      name: 'VenueError',
      kind: 'timeout',
    });
  });
});
