import { describe, expect, it } from 'vitest';
import { pendingAnswer } from '../../src/idempotency/pending-answer.js';
import { formatUsd } from '../../src/lib/money.js';
import { encodeUtf8 } from '../../src/lib/utf8-slab.js';

/**
 * encodeUtf8 (src/lib/utf8-slab.ts) hands out slices of shared slabs: each must hold exactly the
 * bytes `Buffer.from` makes of its string, and keep them while later strings are encoded into the
 * same slab and the next ones.
 */
describe('encodeUtf8', () => {
  const samples = [
    '',
    'plain ASCII',
    'é, ß, €: two and three bytes',
    '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 and 😀: surrogate pairs, four bytes',
    'a lone surrogate \ud800 and \udc00 end',
    'x'.repeat(17_000),
    '€'.repeat(20_000),
    'big '.repeat(40_000),
  ];

  it('gives the bytes Buffer.from gives', () => {
    for (const text of samples) expect(encodeUtf8(text).equals(Buffer.from(text))).toBe(true);
  });

  it('never overwrites a slice it handed out, across slabs', () => {
    const kept: [string, Buffer][] = [];
    // 400 strings of up to ~40 KB: several 1 MiB slabs.
    for (let i = 0; i < 400; i++) {
      const text = `${i}:${(i % 3 === 0 ? '€' : 'ab').repeat((i * 97) % 13_000)}`;
      kept.push([text, encodeUtf8(text)]);
    }
    for (const [text, bytes] of kept) expect(bytes.toString('utf8')).toBe(text);
    expect(new Set(kept.map(([, b]) => b.buffer)).size).toBeGreaterThan(1);
  });
});

describe('pendingAnswer in a slab', () => {
  const key = { idempotencyKey: 'k', fingerprint: 'f', createdAt: new Date(0) };
  const answer = (n: number) => (balance: bigint) =>
    JSON.stringify({ n, prices: ['é'.repeat(n)], remainingBalanceUsd: formatUsd(balance) });

  it('completes its bytes in place without touching the next answer', () => {
    const first = pendingAnswer(key, answer(3000));
    const second = pendingAnswer(key, answer(10));
    const before = Buffer.from(second.bytes(5_000_000n));
    expect(first.bytes(1_234_567n).toString()).toBe(answer(3000)(1_234_567n));
    // The largest balance a real account can have, and one longer than the placeholder.
    expect(first.bytes(999_999_999_999_999_999n).toString()).toBe(answer(3000)(999_999_999_999_999_999n));
    expect(first.bytes(10n ** 25n).toString()).toBe(answer(3000)(10n ** 25n));
    expect(second.bytes(5_000_000n).equals(before)).toBe(true);
    expect(second.render(7n)).toBe(answer(10)(7n));
  });

  it('refuses an answer whose last field is not its balance', () => {
    expect(() => pendingAnswer(key, () => '{"remainingBalanceUsd":"1.00","x":1}')).toThrow(/last field/);
  });
});
