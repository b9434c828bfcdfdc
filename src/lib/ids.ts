import { randomBytes, randomFillSync } from 'node:crypto';

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

/** Random values drawn at once for request ids: one call into the system generator per ~370 ids. */
const REQUEST_ID_POOL = 4096;
/** Two base62 characters per random 16-bit value: 11 values make the 22 characters. */
const PAIRS = Array.from({ length: 62 * 62 }, (_, i) => `${BASE62[Math.floor(i / 62)]}${BASE62[i % 62]}`);
// 65,348 = 17 × 3,844: values at or above it would bias the low pairs.
const PAIR_LIMIT = 17 * PAIRS.length;

/**
 * Request ids: `req_` and 22 random base62 characters (~131 bits), so they are unique without
 * coordination and say nothing about traffic (a counter would tell anyone who makes two requests
 * how many others were served in between). Made on every answer, so random values are drawn from
 * the system generator in blocks and turned into characters two at a time (docs/performance.md).
 */
export function requestIdGenerator(): () => string {
  const pool = new Uint16Array(REQUEST_ID_POOL);
  let at = REQUEST_ID_POOL;
  return () => {
    let id = 'req_';
    for (let pairs = 0; pairs < 11; ) {
      if (at === REQUEST_ID_POOL) {
        randomFillSync(pool);
        at = 0;
      }
      const value = pool[at++] as number;
      if (value < PAIR_LIMIT) {
        id += PAIRS[value % PAIRS.length];
        pairs++;
      }
    }
    return id;
  };
}

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** `length` uniformly random base58 characters (Bitcoin alphabet; rejection sampling, no modulo bias). */
export function randomBase58(length: number): string {
  let out = '';
  while (out.length < length) {
    const bytes = randomBytes(length * 2);
    for (const byte of bytes) {
      // 232 = 4 × 58: bytes at or above it would bias the low characters.
      if (byte < 232) out += BASE58[byte % 58];
      if (out.length === length) break;
    }
  }
  return out;
}
