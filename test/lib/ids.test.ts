import { describe, expect, it } from 'vitest';
import { requestIdGenerator } from '../../src/lib/ids.js';

function commonPrefix(a: string, b: string): number {
  let n = 0;
  while (n < a.length && a[n] === b[n]) n++;
  return n;
}

describe('request ids', () => {
  it('are req_ and 22 base62 characters, all distinct', () => {
    const next = requestIdGenerator();
    const ids = Array.from({ length: 20_000 }, next);
    for (const id of ids.slice(0, 100)) expect(id).toMatch(/^req_[0-9A-Za-z]{22}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('reveal nothing of the traffic: consecutive ids share no more than chance', () => {
    const next = requestIdGenerator();
    const ids = Array.from({ length: 2000 }, next);
    let shared = 0;
    for (let i = 1; i < ids.length; i++) shared += commonPrefix(ids[i - 1] as string, ids[i] as string) - 4;
    // Random characters: the first matches with probability 1/62, so the mean is about 0.016.
    expect(shared / (ids.length - 1)).toBeLessThan(0.2);
    // Nor do they count: issued order is not sorted order.
    const sorted = [...ids].sort();
    expect(sorted).not.toEqual(ids);
  });

  it('use every base62 character about equally often', () => {
    const next = requestIdGenerator();
    const counts = new Map<string, number>();
    for (let i = 0; i < 10_000; i++) {
      for (const c of next().slice(4)) counts.set(c, (counts.get(c) ?? 0) + 1);
    }
    expect(counts.size).toBe(62);
    const expected = (10_000 * 22) / 62;
    for (const n of counts.values()) expect(Math.abs(n - expected) / expected).toBeLessThan(0.15);
  });
});
