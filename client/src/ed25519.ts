// The native Ed25519 program's instruction for an attestation (docs/attestations.md), as an
// `@solana/kit` instruction. Nothing of @solana/kit is imported: the instruction is a plain object
// whose type is written to match kit's `Instruction` (kit's address brand is a string-keyed
// nominal type), so the client runs and type-checks without @solana/kit installed.
import type { Attestation } from './attestation.js';
import { attestationMessageBytes } from './attestation.js';
import { base58ToBytes, base64ToBytes } from './encoding.js';

/** The native Ed25519 signature verification program. */
export const ED25519_PROGRAM_ADDRESS = 'Ed25519SigVerify111111111111111111111111111' as Ed25519ProgramAddress;

/** `Address<'Ed25519SigVerify111111111111111111111111111'>` of @solana/kit, spelled out. */
export type Ed25519ProgramAddress = 'Ed25519SigVerify111111111111111111111111111' & {
  readonly '__brand:@solana/kit': 'Address';
  readonly '__stringEncoding:@solana/kit': 'base58';
};

/** An @solana/kit `Instruction` for the Ed25519 program: no accounts, the signature in its data. */
export interface Ed25519Instruction {
  readonly programAddress: Ed25519ProgramAddress;
  readonly accounts: readonly [];
  readonly data: Uint8Array;
}

/** Where the Ed25519 program's data keeps each part (offsets into the instruction's data). */
export const ED25519_OFFSETS = {
  /** 2 bytes of count and padding, then one 14-byte offsets entry. */
  publicKey: 16,
  signature: 48,
  message: 112,
} as const;

/** `0xFFFF`: the instruction index meaning "this instruction's own data". */
const THIS_INSTRUCTION = 0xffff;

/**
 * The Ed25519 program instruction that checks `attestation`'s signature on chain. Put it in the
 * transaction before your program's instruction; the runtime fails the whole transaction when the
 * signature does not verify. Your program then reads this instruction through the instructions
 * sysvar and checks the public key (Sibyl's published live key), the message's kind and mode,
 * the request it expects and the time (docs/attestations.md).
 *
 * The data is the program's standard layout with one signature, everything in this
 * instruction: count 1, padding, then the u16 offsets (signature 48, instruction 0xFFFF; public
 * key 16, 0xFFFF; message 112, its length, 0xFFFF), then the public key (32 bytes), the
 * signature (64) and the message.
 */
export function ed25519Instruction(attestation: Attestation): Ed25519Instruction {
  const publicKey = base58ToBytes(attestation.publicKey);
  const signature = base64ToBytes(attestation.signature);
  const message = attestationMessageBytes(attestation);
  if (publicKey.length !== 32) throw new Error('ed25519Instruction: the public key is not 32 bytes');
  if (signature.length !== 64) throw new Error('ed25519Instruction: the signature is not 64 bytes');
  const data = new Uint8Array(ED25519_OFFSETS.message + message.length);
  const view = new DataView(data.buffer);
  view.setUint8(0, 1);
  view.setUint8(1, 0);
  view.setUint16(2, ED25519_OFFSETS.signature, true);
  view.setUint16(4, THIS_INSTRUCTION, true);
  view.setUint16(6, ED25519_OFFSETS.publicKey, true);
  view.setUint16(8, THIS_INSTRUCTION, true);
  view.setUint16(10, ED25519_OFFSETS.message, true);
  view.setUint16(12, message.length, true);
  view.setUint16(14, THIS_INSTRUCTION, true);
  data.set(publicKey, ED25519_OFFSETS.publicKey);
  data.set(signature, ED25519_OFFSETS.signature);
  data.set(message, ED25519_OFFSETS.message);
  return { programAddress: ED25519_PROGRAM_ADDRESS, accounts: [], data };
}
