import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { expectLedgerReconciles } from '../helpers/ledger.js';
import { type MintVenues, randomMint, SOL_FROM_EVERY_VENUE, startMintVenues } from './mint-venues.js';

/**
 * What mints outside the registry may cost the venues (docs/prices.md#mints-outside-the-registry),
 * through GET /price against local venues that answer and rate-limit as the real ones do: a mint no
 * venue knows is not asked about again for a while, a failing one backs off, their failures never
 * open a venue's circuit for the listed tokens, and their calls have a budget per venue.
 */

let ctx: TestContext;
let venues: MintVenues;
let account: TestAccount;

beforeAll(async () => {
  venues = await startMintVenues(() => ctx.clock);
  ctx = await createTestContext({
    config: {
      ...venues.config,
      PRICE_ERROR_CACHE_TTL_MS: '1000',
      PRICE_BREAKER_FAILURES: '3',
      PRICE_MINT_LOOKUPS_PER_MINUTE: '5',
    },
  });
  account = await ctx.createAccount({ mode: 'live', balanceUsd: '10.00' });
});

afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
  await venues.close();
});

beforeEach(() => {
  // Past every cache entry, backoff and budget window of the test before.
  ctx.clock.advance(3_600_000);
  venues.failing.clear();
});

const price = (symbolOrMint: string) =>
  ctx.request(account.key, { method: 'GET', url: `/api/v1/price/${symbolOrMint}` });

describe('mints outside the registry', () => {
  it('a mint no venue knows is not asked about again for PRICE_UNKNOWN_MINT_TTL_MS (10 minutes)', async () => {
    const mint = randomMint();
    expect((await price(mint)).json()).toMatchObject({ code: 'SYMBOL_NOT_FOUND', symbol: mint });
    const asked = () => [venues.mintLookups('coingecko'), venues.mintLookups('dexscreener')];
    const once = asked();
    for (const step of [5_000, 60_000, 500_000]) {
      ctx.clock.advance(step);
      expect((await price(mint)).statusCode).toBe(404);
      expect(asked()).toEqual(once);
    }
    ctx.clock.advance(35_000);
    expect((await price(mint)).statusCode).toBe(404);
    expect(asked()).toEqual(once.map((n) => n + 1));
  });

  it('a mint a venue fails for is asked again after 1, 2, 4, 8 s: it backs off', async () => {
    const mint = randomMint();
    venues.failing.set(mint, 'dexscreener');
    const asks: number[] = [];
    let before = venues.mintLookups('dexscreener');
    for (let second = 0; second <= 16; second++) {
      const response = await price(mint);
      expect(response.statusCode).toBe(503);
      if (venues.mintLookups('dexscreener') > before) asks.push(second);
      before = venues.mintLookups('dexscreener');
      ctx.clock.advance(1_000);
    }
    expect(asks).toEqual([0, 1, 3, 7, 15]);
  });

  it('failures for mints never open a venue’s circuit for the listed tokens', async () => {
    expect((await price('SOL')).json()).toMatchObject(SOL_FROM_EVERY_VENUE);
    // Three failures in a row open a circuit here (PRICE_BREAKER_FAILURES, for 30 s); a client makes
    // five, 12 s apart (within the mints' budget, and past SOL's cached quotes), and SOL is asked for
    // right after the last.
    const reasons: string[] = [];
    for (let i = 0; i < 5; i++) {
      if (i > 0) ctx.clock.advance(12_000);
      const mint = randomMint();
      venues.failing.set(mint, 'dexscreener');
      const answer = (await price(mint)).json();
      reasons.push(
        answer.details.unavailableSources.find((u: { name: string }) => u.name === 'dexscreener').reason,
      );
    }
    expect((await price('SOL')).json()).toMatchObject(SOL_FROM_EVERY_VENUE);
    expect(reasons).toEqual(Array(5).fill('http_error'));
  });

  it('each venue hears of at most PRICE_MINT_LOOKUPS_PER_MINUTE mints a minute; the listed tokens never wait', async () => {
    const start = ctx.clock.now().getTime();
    const before = venues.mintLookups('coingecko');
    for (let i = 0; i < 5; i++) expect((await price(randomMint())).statusCode).toBe(404);
    const sixth = await price(randomMint());
    expect(sixth.statusCode).toBe(503);
    const retryAt = new Date(start + 60_000).toISOString();
    expect(sixth.json().details.unavailableSources).toEqual([
      { name: 'coingecko', reason: 'rate_limited', retryAt },
      { name: 'dexscreener', reason: 'rate_limited', retryAt },
    ]);
    expect(venues.mintLookups('coingecko')).toBe(before + 5);
    expect((await price('SOL')).json()).toMatchObject(SOL_FROM_EVERY_VENUE);
    // A minute after the first of them, the budget has room again.
    ctx.clock.advance(60_000);
    expect((await price(randomMint())).statusCode).toBe(404);
    expect(venues.mintLookups('coingecko')).toBe(before + 6);
  });
});
