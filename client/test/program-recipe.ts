// What a market program checks before it settles on Sibyl's official resolution
// (docs/attestations.md#which-resolution-is-official), in TypeScript over the bytes the program reads.
import { getBase58Encoder } from '@solana/kit';
import { hashMarketId } from '../src/index.js';

/**
 * The recipe over the Ed25519 instruction's data as a program reads it through the instructions
 * sysvar (the runtime has already checked the signature): every offset in that instruction, the key
 * the program trusts (Sibyl's current, non-compromised live key), then a version 2 message of kind 3
 * in the expected mode whose market-id field (and request-id field) is the SHA-256 of the market's
 * id, determined; its outcome. Null: not the market's official resolution, or undetermined.
 */
export async function officialOutcome(
  data: Uint8Array,
  expected: { marketId: string; publicKey: string; mode?: 'live' | 'sandbox' },
): Promise<number | null> {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (view.getUint8(0) !== 1) return null;
  for (const offset of [4, 8, 14]) if (view.getUint16(offset, true) !== 0xffff) return null;
  const keyAt = view.getUint16(6, true);
  const trusted = new Uint8Array(getBase58Encoder().encode(expected.publicKey));
  if (!data.subarray(keyAt, keyAt + 32).every((byte, i) => byte === trusted[i])) return null;
  const start = view.getUint16(10, true);
  const message = data.subarray(start, start + view.getUint16(12, true));
  const bytes = new DataView(message.buffer, message.byteOffset, message.byteLength);
  const hash = Buffer.from(await hashMarketId(expected.marketId), 'hex');
  const at = (offset: number) => Buffer.from(message.subarray(offset, offset + 32));
  const official =
    message.length === 150 &&
    Buffer.from(message.subarray(0, 5)).toString('ascii') === 'SIBYL' &&
    bytes.getUint8(5) === 2 &&
    bytes.getUint8(6) === 3 &&
    bytes.getUint8(7) === (expected.mode === 'sandbox' ? 1 : 0) &&
    at(8).equals(hash) &&
    at(80).equals(hash) &&
    bytes.getUint8(117) === 1;
  if (!official) return null;
  const outcome = bytes.getUint8(112);
  return outcome === 255 ? null : outcome;
}
