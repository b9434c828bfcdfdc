import { encodeBase58 } from '../../lib/base58.js';

/** The demo's seeded randomness (docs/markets.md#demo-data). */

/** mulberry32: a small, fast, seedable generator; good enough to make demo data look random. */
export function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  return {
    next,
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]) => items[Math.floor(next() * items.length)] as T,
    wallet: () => encodeBase58(Uint8Array.from({ length: 32 }, () => Math.floor(next() * 256))),
  };
}

export type Random = ReturnType<typeof generator>;

/** A generator of its own for one market's part of the demo, so the rest of the demo is as it was. */
export function marketGenerator(seed: number, id: string, salt = ''): Random {
  let hash = seed >>> 0;
  for (const ch of salt + id) hash = (Math.imul(hash, 31) + ch.charCodeAt(0)) >>> 0;
  return generator(hash);
}

/**
 * The traders of one market: a run of the demo's wallets, from 3 to all of them, its size and start
 * drawn by a generator of its own — few for most markets, many for a few — so markets differ in
 * bettors (sort=bettors has an order to show) and the rest of the demo is drawn as it was.
 */
export function crowdOf(seed: number, id: string, traders: readonly string[]): string[] {
  const draw = marketGenerator(seed, id, 'crowd');
  const size = Math.min(traders.length, 3 + Math.floor((traders.length - 2) * draw.next() ** 1.5));
  const start = draw.int(0, traders.length - 1);
  return Array.from({ length: size }, (_, k) => traders[(start + k) % traders.length] as string);
}
