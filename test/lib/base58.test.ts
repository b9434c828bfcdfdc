import { describe, expect, it } from 'vitest';
import { decodeBase58, encodeBase58, isSolanaAddress } from '../../src/lib/base58.js';

describe('Solana addresses', () => {
  it.each([
    'So11111111111111111111111111111111111111112',
    'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
    'DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263',
    '11111111111111111111111111111111',
  ])('accepts %s', (address) => {
    expect(isSolanaAddress(address)).toBe(true);
  });

  it.each([
    'So1111111111111111111111111111111111111111O', // O is not base58
    'EPjFWdd5AufqSSqeM2qN1xzybapC8G4w', // base58, but only 23 bytes
    'zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz', // base58, but more than 32 bytes
    'abc',
    '0xEPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
    '',
  ])('refuses %s', (address) => {
    expect(isSolanaAddress(address)).toBe(false);
  });

  it('decodes leading ones as zero bytes', () => {
    expect(decodeBase58('1112')).toEqual(Uint8Array.from([0, 0, 0, 1]));
  });

  it('encodes what it decodes, leading zero bytes included', () => {
    for (const address of [
      'So11111111111111111111111111111111111111112',
      '11111111111111111111111111111111',
    ]) {
      expect(encodeBase58(decodeBase58(address) as Uint8Array)).toBe(address);
    }
    expect(encodeBase58(Uint8Array.from([0, 0, 0, 1]))).toBe('1112');
  });
});
