import { describe, expect, it } from 'vitest';
import { type PriceTarget, parseTarget } from '../../../src/prices/tokens.js';
import { createPythVenue } from '../../../src/prices/venues/pyth.js';
import { signal, target, useVenueServer } from './kit.js';

const SOL_FEED = 'ef0d8b6fda2ceba41da15d4095d1da392a0d2f8ed0c6c7bc0f4cfac8c280b56d';
const UNKNOWN_MINT = '7GCihgDB8fe6KNjn2MYtkzZcRjQy3t9GHdC8uHYmW2hr';

/** A Hermes /v2/updates/price/latest answer: mantissa and conf as strings, id without 0x. */
function latest(id: string, price: string, expo: number, publishTime: number): unknown {
  return {
    binary: { encoding: 'hex', data: ['504e41550100000003b801000000040d00'] },
    parsed: [
      {
        id,
        price: { price, conf: '7654321', expo, publish_time: publishTime },
        ema_price: { price, conf: '8000000', expo, publish_time: publishTime },
        metadata: {
          slot: 85480034,
          proof_available_time: publishTime + 1,
          prev_publish_time: publishTime - 1,
        },
      },
    ],
  };
}

const server = useVenueServer();

describe('Pyth Hermes', () => {
  it('scales the string mantissa by expo and takes publish_time in seconds', async () => {
    server.setHandler(() => ({ body: latest(SOL_FEED, '14250123456', -8, 1717000000) }));
    const venue = createPythVenue({ baseUrl: server.url, timeoutMs: 10_000 });
    expect(venue.name).toBe('pyth');
    expect(venue.role).toBe('reference');

    expect(await venue.fetchQuote(target('SOL'), signal)).toEqual({
      price: 142.50123456,
      volume24hUsd: null,
      timestamp: new Date('2024-05-29T16:26:40.000Z'),
    });
    expect(server.requests).toHaveLength(1);
    const request = server.requests[0];
    expect(request?.url.pathname).toBe('/v2/updates/price/latest');
    expect(request?.url.searchParams.getAll('ids[]')).toEqual([SOL_FEED]);
    expect(request?.url.searchParams.get('parsed')).toBe('true');
    expect(request?.headers.authorization).toBeUndefined();
  });

  it('keeps every decimal of the mantissa where naive float scaling would not', async () => {
    const venue = createPythVenue({ baseUrl: server.url, timeoutMs: 10_000 });
    const cases: [string, number, number][] = [
      // 14250000063 * 10 ** -8 is 142.50000063000002.
      ['14250000063', -8, 142.50000063],
      ['2071', -10, 0.0000002071],
      ['99995000', -8, 0.99995],
      // Beyond 2^53 the mantissa is only exact as a string.
      ['9007199254740993', -10, 900719.9254740993],
      ['15', 2, 1500],
    ];
    for (const [mantissa, expo, expected] of cases) {
      server.setHandler(() => ({ body: latest(SOL_FEED, mantissa, expo, 1717000000) }));
      expect((await venue.fetchQuote(target('SOL'), signal))?.price).toBe(expected);
    }
  });

  it('returns null on the plain-text 404 for unknown ids', async () => {
    server.setHandler(() => ({ status: 404, body: `Price ids not found: ${SOL_FEED}` }));
    const venue = createPythVenue({ baseUrl: server.url, timeoutMs: 10_000 });
    expect(await venue.fetchQuote(target('SOL'), signal)).toBeNull();
  });

  it('treats other plain-text errors as failures', async () => {
    const venue = createPythVenue({ baseUrl: server.url, timeoutMs: 10_000 });
    server.setHandler(() => ({ status: 404, body: 'Update data not found' }));
    await expect(venue.fetchQuote(target('SOL'), signal)).rejects.toMatchObject({
      name: 'VenueError',
      kind: 'upstream_error',
    });
    server.setHandler(() => ({ status: 500, body: 'Failed to fetch price updates' }));
    await expect(venue.fetchQuote(target('SOL'), signal)).rejects.toMatchObject({
      name: 'VenueError',
      kind: 'http_error',
    });
  });

  it('classifies 429 with Retry-After as rate_limited', async () => {
    server.setHandler(() => ({ status: 429, headers: { 'retry-after': '60' }, body: 'Too Many Requests' }));
    const venue = createPythVenue({ baseUrl: server.url, timeoutMs: 10_000 });
    await expect(venue.fetchQuote(target('SOL'), signal)).rejects.toMatchObject({
      name: 'VenueError',
      kind: 'rate_limited',
      retryAfterMs: 60_000,
    });
  });

  it('rejects malformed bodies as bad_response', async () => {
    const venue = createPythVenue({ baseUrl: server.url, timeoutMs: 10_000 });
    for (const body of [
      'ok',
      { binary: { encoding: 'hex', data: [] } },
      { parsed: [] },
      latest(
        'e62df6c8b4a85fe1a67db44dc12de5db330f7ac66b72dc658afedf0f4a415b43',
        '6718733589365',
        -8,
        1717000000,
      ),
      latest(SOL_FEED, '142.5', -8, 1717000000),
      latest(SOL_FEED, '0', -8, 1717000000),
      latest(SOL_FEED, '-14250123456', -8, 1717000000),
      { parsed: [{ id: SOL_FEED, price: { price: '14250123456', conf: '1', expo: '-8', publish_time: 1 } }] },
      { parsed: [{ id: SOL_FEED, price: { price: '14250123456', conf: '1', expo: -8 } }] },
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
    const venue = createPythVenue({ baseUrl: server.url, timeoutMs: 300 });
    await expect(venue.fetchQuote(target('SOL'), signal)).rejects.toMatchObject({
      name: 'VenueError',
      kind: 'timeout',
    });
  });

  it('prices only tokens with a feed id, never unknown mints', async () => {
    const venue = createPythVenue({ baseUrl: server.url, timeoutMs: 10_000 });
    expect(parseTarget(UNKNOWN_MINT)).toEqual({
      kind: 'target',
      target: { key: UNKNOWN_MINT, token: null, mint: UNKNOWN_MINT },
    });
    expect(venue.canPrice(target('PYTH'))).toBe(true);
    expect(venue.canPrice(target(UNKNOWN_MINT))).toBe(false);
    const unlisted: PriceTarget = {
      key: 'NOPE',
      token: {
        symbol: 'NOPE',
        name: 'Nope',
        mint: UNKNOWN_MINT,
        decimals: 6,
        markets: { coingecko: 'nope' },
      },
      mint: UNKNOWN_MINT,
    };
    expect(venue.canPrice(unlisted)).toBe(false);
    expect(await venue.fetchQuote(target(UNKNOWN_MINT), signal)).toBeNull();
    expect(server.requests).toHaveLength(0);
  });
});
