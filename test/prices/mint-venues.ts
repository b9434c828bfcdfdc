import { randomBytes } from 'node:crypto';
import { encodeBase58 } from '../../src/lib/base58.js';
import type { Clock } from '../../src/lib/clock.js';
import {
  type FakeRequest,
  type FakeResponse,
  type FakeServer,
  startFakeServer,
} from '../helpers/fake-server.js';

export const SOL_MINT = 'So11111111111111111111111111111111111111112';

/** A well-formed mint no venue has heard of: what a client can make up by the thousand. */
export const randomMint = (): string => encodeBase58(randomBytes(32));

type Venue = 'binance' | 'coingecko' | 'dexscreener';

export interface MintVenues {
  server: FakeServer;
  /** Settings pointing the three venues at the server. */
  config: Record<string, string>;
  /** Calls each venue received about mints other than SOL's (the registry's tokens excluded). */
  mintLookups(venue: 'coingecko' | 'dexscreener'): number;
  /** 429 answers given so far, per venue. */
  refused: Record<Venue, number>;
  /** Mints the venues price (besides SOL), as a real token would be; others are unknown to them. */
  priced: Set<string>;
  /** Mints a venue answers 500 for. */
  failing: Map<string, Venue>;
  close(): Promise<void>;
}

const venueOf = (path: string): Venue =>
  path.startsWith('/api/v3/') ? 'binance' : path.startsWith('/tokens/') ? 'dexscreener' : 'coingecko';

/**
 * One local server answering as Binance, CoinGecko and DexScreener do (their public wire formats),
 * SOL by each venue's own name for it and other mints by address, and limiting calls as they do:
 * per minute of the test's clock, CoinGecko 100 (its demo plan; 429 with its own body) and
 * DexScreener 300 (429), counted from the first call of each minute.
 */
export async function startMintVenues(clock: () => Clock): Promise<MintVenues> {
  const limits: Record<Venue, number> = { binance: 6000, coingecko: 100, dexscreener: 300 };
  const windows = new Map<Venue, { minute: number; calls: number }>();
  const refused: Record<Venue, number> = { binance: 0, coingecko: 0, dexscreener: 0 };
  const priced = new Set<string>();
  const failing = new Map<string, Venue>();
  const lookups = { coingecko: 0, dexscreener: 0 };

  function answer(venue: Venue, request: FakeRequest, nowMs: number): FakeResponse {
    const path = request.url.pathname;
    const seconds = Math.floor(nowMs / 1000);
    if (venue === 'binance') {
      return {
        body: {
          symbol: 'SOLUSDT',
          lastPrice: '150.10000000',
          quoteVolume: '1000000.00000000',
          openTime: nowMs - 86_400_000,
          closeTime: nowMs,
        },
      };
    }
    const mint =
      venue === 'dexscreener'
        ? decodeURIComponent(path.split('/').at(-1) ?? '')
        : (request.url.searchParams.get('contract_addresses') ?? null);
    if (mint !== null && mint !== SOL_MINT) lookups[venue] += 1;
    if (mint !== null && failing.get(mint) === venue) return { status: 500, body: { error: 'internal' } };
    if (venue === 'coingecko') {
      const entry = { usd: 150.2, usd_24h_vol: 2_000_000, last_updated_at: seconds };
      if (path === '/simple/price') {
        return { body: request.url.searchParams.get('ids') === 'solana' ? { solana: entry } : {} };
      }
      // Unknown contract addresses are silently left out of the answer.
      return { body: mint !== null && priced.has(mint) ? { [mint]: entry } : {} };
    }
    if (mint !== SOL_MINT && !(mint !== null && priced.has(mint))) return { body: [] };
    return {
      body: [
        {
          chainId: 'solana',
          dexId: 'raydium',
          pairAddress: 'pair',
          baseToken: { address: mint, name: 'Token', symbol: 'TKN' },
          quoteToken: {
            address: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
            name: 'USDC',
            symbol: 'USDC',
          },
          priceNative: '150.15',
          priceUsd: '150.15',
          volume: { h24: 500_000 },
          liquidity: { usd: 1_000_000 },
        },
      ],
    };
  }

  const server = await startFakeServer((request) => {
    const venue = venueOf(request.url.pathname);
    const nowMs = clock().now().getTime();
    const minute = Math.floor(nowMs / 60_000);
    const window = windows.get(venue);
    const current = window && window.minute === minute ? window : { minute, calls: 0 };
    windows.set(venue, current);
    current.calls += 1;
    if (current.calls > limits[venue]) {
      refused[venue] += 1;
      return venue === 'coingecko'
        ? {
            status: 429,
            body: {
              status: {
                error_code: 429,
                error_message:
                  "You've exceeded the Rate Limit. Please visit https://www.coingecko.com/en/api/pricing to subscribe to our API plans for higher rate limits.",
              },
            },
          }
        : { status: 429, body: 'Too Many Requests' };
    }
    return answer(venue, request, nowMs);
  });
  return {
    server,
    config: {
      PRICE_VENUES: 'binance,coingecko,dexscreener',
      BINANCE_BASE_URL: server.url,
      COINGECKO_BASE_URL: server.url,
      DEXSCREENER_BASE_URL: server.url,
      // Answers of a local fake never come near it, however loaded the machine.
      PRICE_VENUE_TIMEOUT_MS: '10000',
    },
    mintLookups: (venue) => lookups[venue],
    refused,
    priced,
    failing,
    close: () => server.close(),
  };
}

/** What a GET /price answer for SOL must be while the venues are fine: valid, from all three. */
export const SOL_FROM_EVERY_VENUE = {
  isValid: true,
  sourceCount: 3,
  unavailableSources: [],
  sources: [
    { name: 'binance', used: true },
    { name: 'coingecko', used: true },
    { name: 'dexscreener', used: true },
  ],
};
