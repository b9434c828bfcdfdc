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

describe('decodeBase58 against a reference decoder', () => {
  // The straightforward BigInt decoder, as a reference for the byte-wise one.
  function reference(text: string): Uint8Array | null {
    const alphabet = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
    let value = 0n;
    for (const char of text) {
      const digit = alphabet.indexOf(char);
      if (digit < 0) return null;
      value = value * 58n + BigInt(digit);
    }
    const bytes: number[] = [];
    while (value > 0n) {
      bytes.unshift(Number(value & 0xffn));
      value >>= 8n;
    }
    for (const char of text) {
      if (char !== '1') break;
      bytes.unshift(0);
    }
    return Uint8Array.from(bytes);
  }

  it('agrees on 2,000 random strings of every length up to 60, valid and not', () => {
    const alphabet = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0OIl';
    let seed = 42;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    for (let n = 0; n < 2000; n++) {
      const length = 1 + (next() % 60);
      let text = '';
      for (let i = 0; i < length; i++) text += alphabet[next() % (n % 7 === 0 ? alphabet.length : 58)];
      expect(decodeBase58(text), text).toEqual(reference(text));
    }
  });
});
