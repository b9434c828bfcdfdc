import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { AccountMode } from '../accounts/index.js';
import { BASE62_PATTERN, randomBase62, toBase62 } from '../lib/ids.js';

/**
 * Key format (docs/api.md#api-keys): `pk_live_` or `pk_test_`, 32 random base62 characters (~190 bits),
 * then a 6-character base62 CRC32 of everything before it. The checksum lets us reject typos and
 * garbage without touching the database, and lets secret scanners recognise real keys.
 */
export const KEY_PREFIXES = { live: 'pk_live_', sandbox: 'pk_test_' } as const satisfies Record<
  AccountMode,
  string
>;

const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
export const KEY_LENGTH = 8 + RANDOM_LENGTH + CHECKSUM_LENGTH;
/** The public, displayable start of a key. */
export const KEY_PREFIX_LENGTH = 16;

function checksum(body: string): string {
  return toBase62(crc32(body), CHECKSUM_LENGTH);
}

export function hashKey(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

export interface GeneratedKey {
  key: string;
  hash: Buffer;
  prefix: string;
}

export function generateKey(mode: AccountMode): GeneratedKey {
  const body = KEY_PREFIXES[mode] + randomBase62(RANDOM_LENGTH);
  const key = body + checksum(body);
  return { key, hash: hashKey(key), prefix: key.slice(0, KEY_PREFIX_LENGTH) };
}

/** The key's mode when it is well-formed with a valid checksum; null otherwise. No I/O. */
export function checkKeyFormat(key: string): AccountMode | null {
  if (key.length !== KEY_LENGTH) return null;
  const mode: AccountMode | null = key.startsWith(KEY_PREFIXES.live)
    ? 'live'
    : key.startsWith(KEY_PREFIXES.sandbox)
      ? 'sandbox'
      : null;
  if (mode === null) return null;
  const rest = key.slice(8);
  if (!BASE62_PATTERN.test(rest)) return null;
  const body = key.slice(0, KEY_LENGTH - CHECKSUM_LENGTH);
  return checksum(body) === key.slice(KEY_LENGTH - CHECKSUM_LENGTH) ? mode : null;
}

// A key, or the start of one, as it may appear in a URL (the underscores percent-encoded or not).
const KEY_IN_TEXT = /pk(?:_|%5f)(live|test)(?:_|%5f)[0-9a-z]*/gi;
const KEY_START = /pk(?:_|%5f)(?:live|test)(?:_|%5f)/i;
// Query parameters that clients commonly put keys in.
const CREDENTIAL_PARAMETER = /[?&](?:api[_-]?key|access[_-]?token|token|key)=/i;

/**
 * Whether a request URL carries an API key (or a parameter meant for one). URLs end up in proxy
 * logs, browser histories and Referer headers, so a key there has leaked, whatever else it carries.
 */
export function credentialInUrl(url: string): boolean {
  return KEY_START.test(url) || (url.includes('?') && CREDENTIAL_PARAMETER.test(url));
}

/** `text` with anything shaped like a key replaced by its mode and `[redacted]`. */
export function redactKeys(text: string): string {
  return text.replace(KEY_IN_TEXT, (_match, mode: string) => `pk_${mode.toLowerCase()}_[redacted]`);
}
