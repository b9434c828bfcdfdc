const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const INDEX = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) INDEX[ALPHABET.charCodeAt(i)] = i;

/**
 * Decodes Bitcoin-alphabet base58 (as Solana uses); null when a character is outside it. Byte-wise
 * long multiplication: the BigInt version it replaced was a sixth of a 50-symbol batch's CPU
 * (docs/performance.md), every mint in a request being decoded to check it.
 */
export function decodeBase58(text: string): Uint8Array | null {
  if (text.length === 0) return null;
  // Little-endian bytes of the value so far; base58 needs at most 0.733 bytes per character.
  const bytes = new Uint8Array(Math.ceil(text.length * 0.733) + 1);
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const digit = code < 128 ? (INDEX[code] as number) : -1;
    if (digit < 0) return null;
    let carry = digit;
    for (let j = 0; j < length; j++) {
      carry += (bytes[j] as number) * 58;
      bytes[j] = carry & 0xff;
      carry >>= 8;
    }
    while (carry > 0) {
      bytes[length++] = carry & 0xff;
      carry >>= 8;
    }
  }
  // Each leading '1' encodes a leading zero byte.
  let zeros = 0;
  while (zeros < text.length && text.charCodeAt(zeros) === 49) zeros++;
  const out = new Uint8Array(zeros + length);
  for (let j = 0; j < length; j++) out[zeros + j] = bytes[length - 1 - j] as number;
  return out;
}

/** A Solana public key (wallet or mint): base58 that decodes to exactly 32 bytes. */
export function isSolanaAddress(text: string): boolean {
  if (text.length < 32 || text.length > 44) return false;
  return decodeBase58(text)?.length === 32;
}

/** Encodes bytes as Bitcoin-alphabet base58 (the inverse of decodeBase58). */
export function encodeBase58(bytes: Uint8Array): string {
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  let out = '';
  while (value > 0n) {
    out = ALPHABET[Number(value % 58n)] + out;
    value /= 58n;
  }
  for (const byte of bytes) {
    if (byte !== 0) break;
    out = `1${out}`;
  }
  return out;
}
