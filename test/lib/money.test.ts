import { describe, expect, it } from 'vitest';
import { formatUsd, parseUsd } from '../../src/lib/money.js';

describe('money wire format', () => {
  it.each([
    [0n, '0.00'],
    [10_000n, '0.01'],
    [250_000n, '0.25'],
    [1_000_000n, '1.00'],
    [12_345_678n, '12.345678'],
    [1_500_000n, '1.50'],
    [1_230_000n, '1.23'],
    [1_234_000n, '1.234'],
    [1n, '0.000001'],
    [-10_000n, '-0.01'],
    [123_456_789_000_000n, '123456789.00'],
  ])('formats %s micro-USD as %s', (micros, text) => {
    expect(formatUsd(micros)).toBe(text);
  });

  it.each([
    ['100', 100_000_000n],
    ['0.01', 10_000n],
    ['12.345678', 12_345_678n],
    ['0.5', 500_000n],
    [' 3 ', 3_000_000n],
  ])('parses %s', (text, micros) => {
    expect(parseUsd(text)).toBe(micros);
  });

  it.each(['', '-1', '1.2345678', 'abc', '1e3', '1.', '.5', '1,00', '0x10'])('refuses %j', (text) => {
    expect(parseUsd(text)).toBeNull();
  });

  it('round-trips every amount it formats', () => {
    for (const micros of [0n, 1n, 99n, 10_000n, 999_999n, 1_000_001n, 987_654_321n]) {
      expect(parseUsd(formatUsd(micros))).toBe(micros);
    }
  });
});
