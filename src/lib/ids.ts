import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `length` uniformly random base62 characters (rejection sampling, so no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const bytes = randomBytes(length * 2);
    for (const byte of bytes) {
      // 248 = 4 × 62: bytes at or above it would bias the low characters.
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** Fixed-width base62 rendering of a non-negative integer, left-padded with '0'. */
export function toBase62(value: number, width: number): string {
  let n = value;
  let out = '';
  while (n > 0) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out.padStart(width, '0');
}

export const BASE62_PATTERN = /^[0-9A-Za-z]+$/;

/** Public identifiers: a readable type prefix and 22 random base62 characters (~131 bits). */
export function newId(prefix: 'acct' | 'key' | 'job'): string {
  return `${prefix}_${randomBase62(22)}`;
}

/**
 * Request ids: unique, not secret, and made on every request, so they cost a counter instead of
 * random bytes. A random per-process prefix keeps ids from different processes (and restarts)
 * apart; the counter keeps them apart within one.
 */
export function requestIdGenerator(): () => string {
  const prefix = `req_${randomBase62(10)}`;
  let counter = 0;
  return () => {
    counter++;
    return prefix + toBase62(counter, 12);
  };
}
