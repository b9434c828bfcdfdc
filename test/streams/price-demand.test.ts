import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countEntries } from '../helpers/ledger.js';
import {
  type MintVenues,
  randomMint,
  SOL_FROM_EVERY_VENUE,
  SOL_MINT,
  startMintVenues,
} from '../prices/mint-venues.js';
import { named, type StreamService, startStreamService } from './service.js';

/**
 * What price streams of made-up mints can ask of the venues (docs/streams.md#prices): nothing a
 * customer streams lowers another customer's prices. Local venues answer and rate-limit as CoinGecko
 * (100 calls a minute) and DexScreener (300) do.
 */

let venues: MintVenues;
let service: StreamService;

beforeAll(async () => {
  venues = await startMintVenues(() => service.ctx.clock);
  service = await startStreamService({
    config: { ...venues.config, STREAMS_PER_ADDRESS: '100' },
  });
});
afterAll(async () => {
  await service.close();
  await venues.close();
});

const solPrice = async (key: string) =>
  (await service.ctx.request(key, { method: 'GET', url: '/api/v1/price/SOL' })).json();

/** Waits until `check` holds (the server notices a client's hang-up in its own time). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 10));
}

const openStreams = () => service.ctx.app.services.streams.size;

/** Until every event of a snapshot of `count` symbols has arrived (a price, or why not). */
const snapshot = (client: Awaited<ReturnType<StreamService['open']>>, count: number) =>
  client.until(() => named(client, 'price').length + named(client, 'unavailable').length >= count);

describe('price streams of mints no venue knows', () => {
  it('20 streams of 50 made-up mints leave another account’s SOL valid and from all its venues', async () => {
    const { ctx } = service;
    const victim = await ctx.createAccount({ mode: 'live' });
    expect(await solPrice(victim.key)).toMatchObject(SOL_FROM_EVERY_VENUE);

    // 0.04 USD a minute: 20 accounts, one stream of 50 mints each.
    const abusers = await Promise.all(Array.from({ length: 20 }, () => ctx.createAccount({ mode: 'live' })));
    const streams = await Promise.all(
      abusers.map((a) =>
        service.open(`/stream/prices?symbols=${Array.from({ length: 50 }, randomMint)}`, a.key),
      ),
    );
    for (const client of streams) expect(client.response.status).toBe(200);
    for (const client of streams) await snapshot(client, 50);
    await until(() => venues.mintLookups('coingecko') >= 60 && venues.mintLookups('dexscreener') >= 60);
    // Past SOL's cached quotes: the venues are asked about it again.
    ctx.clock.advance(2_000);
    expect(await solPrice(victim.key)).toMatchObject(SOL_FROM_EVERY_VENUE);
    // Each venue heard of 60 of the 1,000 mints (PRICE_MINT_LOOKUPS_PER_MINUTE), the rest wait.
    expect([venues.mintLookups('coingecko'), venues.mintLookups('dexscreener')]).toEqual([60, 60]);

    // Three more minutes of the streams: each minute the venues hear of 60 more mints, never past
    // their limits, and SOL stays whole.
    for (let minute = 1; minute <= 3; minute++) {
      ctx.clock.advance(60_000);
      await streams[0]?.until(
        () =>
          venues.mintLookups('coingecko') >= 60 * (minute + 1) &&
          venues.mintLookups('dexscreener') >= 60 * (minute + 1),
      );
      expect(await solPrice(victim.key)).toMatchObject(SOL_FROM_EVERY_VENUE);
      expect([venues.mintLookups('coingecko'), venues.mintLookups('dexscreener')]).toEqual([
        60 * (minute + 1),
        60 * (minute + 1),
      ]);
    }
    expect(venues.refused).toEqual({ binance: 0, coingecko: 0, dexscreener: 0 });
    for (const client of streams) await client.close();
    await until(() => openStreams() === 0);
    // A thousand topics and twenty paid streams on a shared machine: 15-40 s measured.
  }, 120_000);

  it('one account’s streams follow at most 50 mints without a price; priced mints and listed tokens do not count', async () => {
    const { ctx } = service;
    ctx.clock.advance(3_600_000);
    const account = await ctx.createAccount({ mode: 'live' });
    const keys = [
      account.key,
      (await ctx.addKey(account.accountId)).key,
      (await ctx.addKey(account.accountId)).key,
    ];
    const real = randomMint();
    venues.priced.add(real);
    const made = Array.from({ length: 49 }, randomMint);
    const first = await service.open(`/stream/prices?symbols=${[real, ...made]}`, keys[0] as string);
    expect(first.response.status).toBe(200);
    await snapshot(first, 50);
    await first.until(() =>
      named(first, 'price').some((e) => (e.data as { symbol: string }).symbol === real),
    );

    // 49 made-up mints followed; one more, with listed tokens and the mint that prices, is the 50th.
    const second = await service.open(
      `/stream/prices?symbols=SOL,${SOL_MINT},${real},${randomMint()}`,
      keys[1] as string,
    );
    expect(second.response.status).toBe(200);
    const charges = await countEntries(ctx.database.db, account.accountId, 'charge');
    const third = await service.open(`/stream/prices?symbols=SOL,${randomMint()}`, keys[2] as string);
    expect(third.response.status).toBe(429);
    expect(await third.response.json()).toMatchObject({
      code: 'STREAM_LIMIT_EXCEEDED',
      details: { limit: 'unpricedPerAccount', max: 50, open: 50 },
    });
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(charges);
    // Another account is not held to this one's mints.
    const other = await ctx.createAccount({ mode: 'live' });
    const fourth = await service.open(`/stream/prices?symbols=${randomMint()}`, other.key);
    expect(fourth.response.status).toBe(200);
    // Closing a stream gives its mints back.
    const open = openStreams();
    await second.close();
    await until(() => openStreams() === open - 1);
    const fifth = await service.open(`/stream/prices?symbols=${randomMint()}`, keys[2] as string);
    expect(fifth.response.status).toBe(200);
    for (const client of [first, fourth, fifth]) await client.close();
  });
});
