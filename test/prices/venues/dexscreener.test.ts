import { describe, expect, it } from 'vitest';
import { parseTarget } from '../../../src/prices/tokens.js';
import { createDexScreenerVenue } from '../../../src/prices/venues/dexscreener.js';
import { signal, target, useVenueServer } from './kit.js';

const BONK = 'DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263';
const SOL = 'So11111111111111111111111111111111111111112';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const UNKNOWN_MINT = '7GCihgDB8fe6KNjn2MYtkzZcRjQy3t9GHdC8uHYmW2hr';

/** A pair shaped like DexScreener's: prices as strings, volumes and liquidity as numbers. */
function pair(options: {
  base: string;
  quote: string;
  priceUsd?: string;
  liquidityUsd?: number;
  volume24h: number;
  chainId?: string;
}): Record<string, unknown> {
  const result: Record<string, unknown> = {
    chainId: options.chainId ?? 'solana',
    dexId: 'raydium',
    url: 'https://dexscreener.com/solana/pair',
    pairAddress: `pair-${options.base.slice(0, 4)}-${options.quote.slice(0, 4)}-${options.volume24h}`,
    labels: ['CLMM'],
    baseToken: { address: options.base, name: 'Base', symbol: 'BASE' },
    quoteToken: { address: options.quote, name: 'Quote', symbol: 'QUOTE' },
    priceNative: '0.0000001234',
    txns: {
      m5: { buys: 3, sells: 1 },
      h1: { buys: 20, sells: 8 },
      h6: { buys: 90, sells: 40 },
      h24: { buys: 400, sells: 150 },
    },
    volume: { h24: options.volume24h, h6: 20000.0, h1: 5000.0, m5: 100.0 },
    priceChange: { m5: 1.2, h1: 5.0, h6: -3.0, h24: 42.0 },
    fdv: 210000.0,
    marketCap: 200000.0,
    pairCreatedAt: 1755000000000,
  };
  if (options.priceUsd !== undefined) result.priceUsd = options.priceUsd;
  if (options.liquidityUsd !== undefined) {
    result.liquidity = { usd: options.liquidityUsd, base: 1000000.0, quote: 100.0 };
  }
  return result;
}

const server = useVenueServer();

describe('DexScreener', () => {
  it('prices from the deepest pool where the token is the base and sums volume over those pools', async () => {
    server.setHandler(() => ({
      body: [
        pair({ base: BONK, quote: SOL, priceUsd: '0.00002071', liquidityUsd: 54321.0, volume24h: 80000.0 }),
        // The deepest pool overall, but BONK is its quote: its priceUsd is SOL's price.
        pair({ base: SOL, quote: BONK, priceUsd: '147.1', liquidityUsd: 9000000, volume24h: 5000000 }),
        pair({
          base: BONK,
          quote: USDC,
          priceUsd: '0.00002075',
          liquidityUsd: 1250000.5,
          volume24h: 1500000.25,
        }),
        // Liquidity missing counts as 0; the pool still trades the token, so its volume counts.
        pair({ base: BONK, quote: UNKNOWN_MINT, priceUsd: '0.0000208', volume24h: 1000 }),
        // No USD price: says nothing about the token's price, so neither its price nor volume is used.
        pair({ base: BONK, quote: UNKNOWN_MINT, liquidityUsd: 2000000, volume24h: 999 }),
      ],
    }));
    const venue = createDexScreenerVenue({ baseUrl: server.url, timeoutMs: 10_000 });
    expect(venue.name).toBe('dexscreener');
    expect(venue.role).toBe('market');

    expect(await venue.fetchQuote(target('BONK'), signal)).toEqual({
      price: 0.00002075,
      volume24hUsd: 1581000.25,
      timestamp: null,
    });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.url.pathname).toBe(`/tokens/v1/solana/${BONK}`);
    expect(server.requests[0]?.url.search).toBe('');
  });

  it('picks the first pool when no pool reports liquidity, and ignores pairs on other chains', async () => {
    server.setHandler(() => ({
      body: [
        pair({ base: BONK, quote: SOL, priceUsd: '0.0000207', volume24h: 10, chainId: 'ethereum' }),
        pair({ base: BONK, quote: SOL, priceUsd: '0.0000206', volume24h: 20 }),
        pair({ base: BONK, quote: USDC, priceUsd: '0.0000209', volume24h: 30 }),
      ],
    }));
    const venue = createDexScreenerVenue({ baseUrl: server.url, timeoutMs: 10_000 });
    expect(await venue.fetchQuote(target('BONK'), signal)).toEqual({
      price: 0.0000206,
      volume24hUsd: 50,
      timestamp: null,
    });
  });

  it('returns null for an empty array or when the token is only ever the quote', async () => {
    const venue = createDexScreenerVenue({ baseUrl: server.url, timeoutMs: 10_000 });
    server.setHandler(() => ({ body: [] }));
    expect(await venue.fetchQuote(target('BONK'), signal)).toBeNull();
    server.setHandler(() => ({
      body: [pair({ base: SOL, quote: BONK, priceUsd: '147.1', liquidityUsd: 10, volume24h: 5 })],
    }));
    expect(await venue.fetchQuote(target('BONK'), signal)).toBeNull();
  });

  it('prices an unknown mint and cannot price a target without a mint', async () => {
    expect(parseTarget(UNKNOWN_MINT)).toEqual({
      kind: 'target',
      target: { key: UNKNOWN_MINT, token: null, mint: UNKNOWN_MINT },
    });
    server.setHandler(() => ({
      body: [
        pair({ base: UNKNOWN_MINT, quote: SOL, priceUsd: '1.234', liquidityUsd: 5000, volume24h: 777.5 }),
      ],
    }));
    const venue = createDexScreenerVenue({ baseUrl: server.url, timeoutMs: 10_000 });
    expect(venue.canPrice(target(UNKNOWN_MINT))).toBe(true);
    expect(venue.canPrice({ key: 'X', token: null, mint: null })).toBe(false);
    expect(await venue.fetchQuote(target(UNKNOWN_MINT), signal)).toEqual({
      price: 1.234,
      volume24hUsd: 777.5,
      timestamp: null,
    });
    expect(server.requests[0]?.url.pathname).toBe(`/tokens/v1/solana/${UNKNOWN_MINT}`);
  });

  it('classifies 429 with Retry-After as rate_limited', async () => {
    server.setHandler(() => ({
      status: 429,
      headers: { 'retry-after': '60' },
      body: { error: 'rate limited' },
    }));
    const venue = createDexScreenerVenue({ baseUrl: server.url, timeoutMs: 10_000 });
    await expect(venue.fetchQuote(target('BONK'), signal)).rejects.toMatchObject({
      name: 'VenueError',
      kind: 'rate_limited',
      retryAfterMs: 60_000,
    });
  });

  it('rejects malformed bodies as bad_response', async () => {
    const venue = createDexScreenerVenue({ baseUrl: server.url, timeoutMs: 10_000 });
    // The legacy /latest/dex/tokens shape is an object, not the array /tokens/v1 returns.
    for (const body of ['<html>', { schemaVersion: '1.0.0', pairs: null }, [null], ['pair']]) {
      server.setHandler(() => ({ body }));
      await expect(venue.fetchQuote(target('BONK'), signal)).rejects.toMatchObject({
        name: 'VenueError',
        kind: 'bad_response',
      });
    }
  });

  it('times out a slow answer', async () => {
    server.setHandler(() => ({ hang: true }));
    const venue = createDexScreenerVenue({ baseUrl: server.url, timeoutMs: 300 });
    await expect(venue.fetchQuote(target('BONK'), signal)).rejects.toMatchObject({
      name: 'VenueError',
      kind: 'timeout',
    });
  });
});
