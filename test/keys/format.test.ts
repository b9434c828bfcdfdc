import { describe, expect, it } from 'vitest';
import { checkKeyFormat, generateKey, hashKey, KEY_LENGTH } from '../../src/keys/format.js';

describe('API key format', () => {
  it('issues pk_live_/pk_test_ keys with a valid checksum and a 16-character prefix', () => {
    const live = generateKey('live');
    const test = generateKey('sandbox');
    expect(live.key).toMatch(/^pk_live_[0-9A-Za-z]{38}$/);
    expect(test.key).toMatch(/^pk_test_[0-9A-Za-z]{38}$/);
    expect(live.key).toHaveLength(KEY_LENGTH);
    expect(live.prefix).toBe(live.key.slice(0, 16));
    expect(checkKeyFormat(live.key)).toBe('live');
    expect(checkKeyFormat(test.key)).toBe('sandbox');
    expect(live.hash).toEqual(hashKey(live.key));
    expect(live.hash).toHaveLength(32);
  });

  it('never issues the same key twice', () => {
    const keys = new Set(Array.from({ length: 2000 }, () => generateKey('live').key));
    expect(keys.size).toBe(2000);
  });

  it('rejects any single-character change (the checksum catches it)', () => {
    const { key } = generateKey('live');
    let caught = 0;
    let tried = 0;
    for (let i = 8; i < key.length; i++) {
      const replacement = key[i] === 'a' ? 'b' : 'a';
      const mutated = key.slice(0, i) + replacement + key.slice(i + 1);
      tried++;
      if (checkKeyFormat(mutated) === null) caught++;
    }
    expect(caught).toBe(tried);
  });

  it.each([
    '',
    'pk_live_',
    'sk_live_0123456789012345678901234567890123456789',
    `pk_prod_${'a'.repeat(38)}`,
    `pk_live_${'a'.repeat(37)}`,
    `pk_live_${'a'.repeat(39)}`,
    `pk_live_${'-'.repeat(38)}`,
    `pk_live_${'a'.repeat(32)}\u0000aaaaa`,
  ])('rejects malformed %j without a lookup', (key) => {
    expect(checkKeyFormat(key)).toBeNull();
  });

  it('rejects random base62 strings of the right shape (checksum false-positive rate)', () => {
    let accepted = 0;
    for (let i = 0; i < 20_000; i++) {
      const body = generateKey('live').key.slice(0, 40);
      const fakeChecksum = Math.random().toString(36).slice(2, 8).padEnd(6, '0');
      if (checkKeyFormat(body + fakeChecksum) !== null) accepted++;
    }
    expect(accepted).toBe(0);
  });
});
