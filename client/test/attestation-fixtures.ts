// Messages encoded per the layout in docs/attestations.md, written here independently of the
// client's decoder, and signed with keys made by node:crypto.
import { createHash, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import type { Attestation } from '../src/index.js';

export interface Signer {
  publicKey: string;
  privateKey: KeyObject;
  /** The raw 32-byte public key. */
  raw: Uint8Array;
}

export function newSigner(): Signer {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = new Uint8Array(publicKey.export({ format: 'der', type: 'spki' }).subarray(-32));
  return { publicKey: getBase58Decoder().decode(raw), privateKey, raw };
}

export const sha256 = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

function header(
  kind: number,
  mode: number,
  requestId: string,
  madeAt: number,
  size: number,
  version = 1,
): Buffer {
  const bytes = Buffer.alloc(size);
  bytes.write('SIBYL', 0, 'ascii');
  bytes.writeUInt8(version, 5);
  bytes.writeUInt8(kind, 6);
  bytes.writeUInt8(mode, 7);
  sha256(requestId).copy(bytes, 8);
  bytes.writeBigInt64LE(BigInt(madeAt), 40);
  return bytes;
}

export interface PriceInput {
  mode?: 'live' | 'sandbox';
  requestId: string;
  madeAt: number;
  symbol: string;
  price: bigint;
  exponent: number;
  sources: number;
  valid: boolean;
}

export function encodePrice(p: PriceInput): Buffer {
  const bytes = header(1, p.mode === 'sandbox' ? 1 : 0, p.requestId, p.madeAt, 94);
  sha256(p.symbol).copy(bytes, 48);
  bytes.writeBigInt64LE(p.price, 80);
  bytes.writeInt32LE(p.exponent, 88);
  bytes.writeUInt8(p.sources, 92);
  bytes.writeUInt8(p.valid ? 1 : 0, 93);
  return bytes;
}

export interface ResolutionInput {
  /** 2 (the default: 150 bytes, with the evidence digest) or 1 (118 bytes, signed before version 2). */
  version?: 1 | 2;
  /** 2 (the default): a resolution asked for; 3: a market's official resolution. */
  kind?: 2 | 3;
  /** The votes' evidence, in slot order: its digest is the last 32 bytes of a version 2 message. */
  evidence?: unknown[][];
  mode?: 'live' | 'sandbox';
  requestId: string;
  madeAt: number;
  question: string;
  outcomes: string[];
  context?: string;
  marketId?: string;
  outcomeIndex: number | null;
  confidence: number;
  agreeing: number;
  models: number;
  canDetermine: boolean;
}

/**
 * The digest of the votes' evidence, written here independently of the client: JSON with every
 * object's keys sorted (in code-unit order), UTF-8, SHA-256.
 */
export function evidenceDigest(evidence: unknown[][]): Buffer {
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
  return sha256(JSON.stringify(sorted(evidence)));
}

export function encodeResolution(r: ResolutionInput): Buffer {
  const version = r.version ?? 2;
  const size = version === 1 ? 118 : 150;
  const bytes = header(r.kind ?? 2, r.mode === 'sandbox' ? 1 : 0, r.requestId, r.madeAt, size, version);
  sha256(JSON.stringify([r.question, r.outcomes, r.context ?? null])).copy(bytes, 48);
  if (r.marketId !== undefined) sha256(r.marketId).copy(bytes, 80);
  bytes.writeUInt8(r.outcomeIndex ?? 255, 112);
  bytes.writeUInt16LE(r.confidence, 113);
  bytes.writeUInt8(r.agreeing, 115);
  bytes.writeUInt8(r.models, 116);
  bytes.writeUInt8(r.canDetermine ? 1 : 0, 117);
  if (version === 2) evidenceDigest(r.evidence ?? [[], [], [], []]).copy(bytes, 118);
  return bytes;
}

/** An answer's `attestation` field for `message`, signed by `signer`. */
export function attest(message: Uint8Array, signer: Signer): Attestation {
  return {
    message: Buffer.from(message).toString('base64'),
    signature: sign(null, message, signer.privateKey).toString('base64'),
    publicKey: signer.publicKey,
    version: message[5] ?? 0,
  };
}
