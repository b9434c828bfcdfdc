import { createHash, createPublicKey, verify } from 'node:crypto';
import { expect } from 'vitest';
import { decodeBase58 } from '../../src/lib/base58.js';

const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export interface TestAttestation {
  message: string;
  signature: string;
  publicKey: string;
  version: number;
}

/** Verifies an attestation with Node's Ed25519 against a base58 public key, as a reader would. */
export function verifies(a: { message: string | Buffer; signature: string }, publicKey: string): boolean {
  const raw = decodeBase58(publicKey);
  if (!raw) return false;
  const key = createPublicKey({
    key: Buffer.concat([SPKI_ED25519_PREFIX, raw]),
    format: 'der',
    type: 'spki',
  });
  const message = typeof a.message === 'string' ? Buffer.from(a.message, 'base64') : a.message;
  return verify(null, message, key, Buffer.from(a.signature, 'base64'));
}

export const sha256 = (text: string | Uint8Array) => createHash('sha256').update(text).digest();

/** Every single-bit flip of the message (one per byte, each bit position in turn) fails to verify. */
export function expectEveryFlipFails(a: TestAttestation, publicKey: string): void {
  const message = Buffer.from(a.message, 'base64');
  for (let i = 0; i < message.length; i++) {
    const flipped = Buffer.from(message);
    flipped[i] = (flipped[i] ?? 0) ^ (1 << (i % 8));
    expect(verifies({ message: flipped, signature: a.signature }, publicKey), `byte ${i}`).toBe(false);
  }
}

/** The header fields of a message, read at their offsets (docs/attestations.md#the-message). */
export function readHeader(message: Buffer) {
  return {
    magic: message.subarray(0, 5).toString('ascii'),
    version: message.readUInt8(5),
    kind: message.readUInt8(6),
    mode: message.readUInt8(7) === 0 ? 'live' : 'sandbox',
    requestIdHash: message.subarray(8, 40),
    timeMs: Number(message.readBigInt64LE(40)),
  };
}

export function readPrice(message: Buffer) {
  return {
    ...readHeader(message),
    asset: message.subarray(48, 80),
    price: message.readBigInt64LE(80),
    exponent: message.readInt32LE(88),
    sources: message.readUInt8(92),
    valid: message.readUInt8(93) === 1,
  };
}

export function readResolution(message: Buffer) {
  return {
    ...readHeader(message),
    questionHash: message.subarray(48, 80),
    marketIdHash: message.subarray(80, 112),
    outcome: message.readUInt8(112),
    confidenceBp: message.readUInt16LE(113),
    agreeing: message.readUInt8(115),
    models: message.readUInt8(116),
    canDetermine: message.readUInt8(117) === 1,
    evidenceHash: message.subarray(118, 150),
  };
}

/**
 * The digest a version 2 resolution holds at 118, written here independently of the service: the
 * SHA-256 of the votes' `evidence` arrays, in slot order, as JSON with every object's keys sorted.
 */
export function evidenceDigest(votes: readonly { evidence: readonly unknown[] }[]): Buffer {
  const sorted = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(sorted)
      : value !== null && typeof value === 'object'
        ? Object.fromEntries(
            Object.entries(value)
              .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
              .map(([k, v]) => [k, sorted(v)]),
          )
        : value;
  return sha256(JSON.stringify(votes.map((vote) => sorted(vote.evidence))));
}

/** price × 10^exponent as the decimal number it states. */
export function fixedPointValue(price: bigint, exponent: number): number {
  return Number(`${price}e${exponent}`);
}
