import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { expectLedgerReconciles } from '../helpers/ledger.js';
import { type MintVenues, randomMint, startMintVenues } from './mint-venues.js';

/**
 * One account's share of a venue's budget for mints outside the registry
 * (docs/prices.md#mints-outside-the-registry), through the price routes against local venues: an
 * account that made up mints until its share is spent is refused, and the others still have the rest
 * of the budget, which still bounds them all.
 */

let ctx: TestContext;
let venues: MintVenues;
let accounts: TestAccount[];

beforeAll(async () => {
  venues = await startMintVenues(() => ctx.clock);
  ctx = await createTestContext({
    config: { ...venues.config, PRICE_MINT_LOOKUPS_PER_MINUTE: '5', PRICE_MINT_LOOKUPS_PER_ACCOUNT: '2' },
  });
  accounts = [];
  for (let i = 0; i < 3; i++) accounts.push(await ctx.createAccount({ mode: 'live', balanceUsd: '10.00' }));
});

afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
  await venues.close();
});

const price = (account: TestAccount | undefined, mint: string) =>
  ctx.request((account as TestAccount).key, { method: 'GET', url: `/api/v1/price/${mint}` });
const lookups = () => [venues.mintLookups('coingecko'), venues.mintLookups('dexscreener')];
const refusedUntil = (retryAt: string) => [
  { name: 'coingecko', reason: 'rate_limited', retryAt },
  { name: 'dexscreener', reason: 'rate_limited', retryAt },
];

describe('one account’s share of the mint lookups', () => {
  it('an account past PRICE_MINT_LOOKUPS_PER_ACCOUNT is refused; the others keep the rest of the venue’s budget', async () => {
    const [a, b, c] = accounts;
    const start = ctx.clock.now().getTime();
    const before = lookups();

    // Account a spends its share (2 a venue); its third made-up mint reaches no venue.
    for (let i = 0; i < 2; i++) expect((await price(a, randomMint())).statusCode).toBe(404);
    const third = await price(a, randomMint());
    expect(third.statusCode).toBe(503);
    expect(third.json().details.unavailableSources).toEqual(
      refusedUntil(new Date(start + 60_000).toISOString()),
    );
    expect(lookups()).toEqual(before.map((n) => n + 2));

    // Account b is not refused for what a asked; it too is held to its share.
    ctx.clock.advance(1_000);
    for (let i = 0; i < 2; i++) expect((await price(b, randomMint())).statusCode).toBe(404);
    const bThird = await price(b, randomMint());
    expect(bThird.statusCode).toBe(503);
    expect(bThird.json().details.unavailableSources).toEqual(
      refusedUntil(new Date(start + 61_000).toISOString()),
    );

    // Account c takes the venue's last call of the minute (5); then the venue's budget refuses it,
    // until a's first call is a minute old.
    ctx.clock.advance(1_000);
    expect((await price(c, randomMint())).statusCode).toBe(404);
    const cSecond = await price(c, randomMint());
    expect(cSecond.statusCode).toBe(503);
    expect(cSecond.json().details.unavailableSources).toEqual(
      refusedUntil(new Date(start + 60_000).toISOString()),
    );
    expect(lookups()).toEqual(before.map((n) => n + 5));

    // A minute after a's first call, its share and the venue's budget have room again.
    ctx.clock.advance(58_000);
    expect((await price(a, randomMint())).statusCode).toBe(404);
    expect(lookups()).toEqual(before.map((n) => n + 6));
  });

  it('a batch takes its mints from the asking account’s share', async () => {
    ctx.clock.advance(3_600_000);
    const [a] = accounts;
    const before = lookups();
    const response = await ctx.request((a as TestAccount).key, {
      method: 'POST',
      url: '/api/v1/price/batch',
      payload: { symbols: [randomMint(), randomMint(), randomMint()] },
    });
    // Two not found, the third asked of no venue: nothing priced, so the batch is 503 and not charged.
    expect(response.statusCode, response.body).toBe(503);
    expect(lookups()).toEqual(before.map((n) => n + 2));
  });
});
