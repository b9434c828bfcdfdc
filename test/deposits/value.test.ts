import { describe, expect, it } from 'vitest';
import { rateFromPrice, usdMicrosAt, valueDeposit } from '../../src/deposits/value.js';

const MIN = 1_000_000n; // DEPOSIT_MIN_USD 1.00
const sol = (lamports: bigint) => ({ asset: 'SOL' as const, amount: lamports, decimals: 9 });
const usdc = (units: bigint) => ({ asset: 'USDC' as const, amount: units, decimals: 6 });

describe('the value rule', () => {
  it('USDC 1:1 inside the 0.98–1.02 band, edges included', () => {
    for (const usdcPrice of [0.98, 0.995, 1, 1.02]) {
      expect(valueDeposit(usdc(25_500_000n), { usdcPrice, solRate: null }, MIN)).toEqual({
        status: 'credit',
        reason: null,
        usdMicros: 25_500_000n,
        rate: '1',
      });
    }
  });

  it('USDC held outside the band, and without a USDC price', () => {
    for (const usdcPrice of [0.9799, 1.0201, 0.5]) {
      expect(valueDeposit(usdc(25_000_000n), { usdcPrice, solRate: '150' }, MIN)).toMatchObject({
        status: 'held',
        reason: 'usdc_off_peg',
        usdMicros: 25_000_000n,
      });
    }
    expect(valueDeposit(usdc(25_000_000n), { usdcPrice: null, solRate: '150' }, MIN)).toMatchObject({
      status: 'held',
      reason: 'no_price',
    });
  });

  it('SOL at the rate, rounded down to the micro-USD, in exact integers', () => {
    // 1.234567891 SOL × 142.123456789 USD/SOL: 1234567891 × 142123456789 = 175461056309625361999,
    // over 10^18 = 175.461056309625361999 USD → 175461056 micro-USD (the rest dropped, never rounded up).
    expect(valueDeposit(sol(1_234_567_891n), { usdcPrice: 1, solRate: '142.123456789' }, MIN)).toEqual({
      status: 'credit',
      reason: null,
      usdMicros: 175_461_056n,
      rate: '142.123456789',
    });
    // 1 lamport short of a micro-USD at 100 USD/SOL: 9 lamports = 0.0000009 USD → 0.
    expect(usdMicrosAt(9n, 9, '100')).toBe(0n);
    expect(usdMicrosAt(10n, 9, '100')).toBe(1n);
    // Far beyond 2^53 stays exact: 10^9 SOL × 1000000.5 USD = 1.0000005 × 10^15 USD = 1.0000005 × 10^21 micro-USD.
    expect(usdMicrosAt(10n ** 18n, 9, '1000000.5')).toBe(1_000_000_500_000_000_000_000n);
  });

  it('SOL held without a rate', () => {
    expect(valueDeposit(sol(5_000_000_000n), { usdcPrice: 1, solRate: null }, MIN)).toEqual({
      status: 'held',
      reason: 'no_price',
      usdMicros: null,
      rate: null,
    });
  });

  it('below DEPOSIT_MIN_USD: ignored (USDC at face value, whatever the peg)', () => {
    // 0.006 SOL at 150 = 0.90 USD.
    expect(valueDeposit(sol(6_000_000n), { usdcPrice: 1, solRate: '150' }, MIN)).toEqual({
      status: 'ignored',
      reason: 'below_minimum',
      usdMicros: 900_000n,
      rate: '150',
    });
    expect(valueDeposit(usdc(999_999n), { usdcPrice: 0.5, solRate: null }, MIN)).toMatchObject({
      status: 'ignored',
      usdMicros: 999_999n,
    });
    expect(valueDeposit(usdc(1_000_000n), { usdcPrice: 1, solRate: null }, MIN).status).toBe('credit');
  });

  it('a VWAP float becomes the exact decimal rate that is applied and stored', () => {
    expect(rateFromPrice(142.12)).toBe('142.12');
    expect(rateFromPrice(150)).toBe('150');
    expect(rateFromPrice(0.000012345)).toBe('0.000012345');
    expect(rateFromPrice(1 / 3)).toBe('0.333333333');
    expect(() => rateFromPrice(Number.NaN)).toThrow(RangeError);
    expect(() => usdMicrosAt(1n, 9, '1e3')).toThrow(RangeError);
  });
});
