import { createHash } from 'node:crypto';
import { decodeBase58, isSolanaAddress } from '../lib/base58.js';
import { canonicalJson } from '../lib/canonical-json.js';

/**
 * The attestation message: a fixed little-endian layout a Solana program reads at fixed offsets
 * (docs/attestations.md#the-message). A change of layout is a new version: a price is version 1,
 * a resolution version 2 (version 1's fields, then the digest of the votes' evidence).
 *
 * | offset | bytes | field |
 * |---|---|---|
 * | 0 | 5 | "SIBYL" |
 * | 5 | 1 | version (1 price, 2 resolution) |
 * | 6 | 1 | kind (1 price, 2 resolution, 3 market resolution) |
 * | 7 | 1 | mode (0 live, 1 sandbox) |
 * | 8 | 32 | SHA-256 of the request id |
 * | 40 | 8 | time made, i64 Unix milliseconds |
 * | price 48 | 32 | SHA-256 of the symbol, or the mint's 32 bytes |
 * | price 80 | 8 | price, i64 (value = price × 10^exponent) |
 * | price 88 | 4 | exponent, i32 |
 * | price 92 | 1 | sources used, u8 |
 * | price 93 | 1 | valid, u8 |
 * | resolution 48 | 32 | SHA-256 of the canonical question |
 * | resolution 80 | 32 | SHA-256 of the market id, or zeros |
 * | resolution 112 | 1 | winning outcome index, u8 (255: none) |
 * | resolution 113 | 2 | confidence, u16 basis points |
 * | resolution 115 | 1 | agreeing models, u8 |
 * | resolution 116 | 1 | models, u8 |
 * | resolution 117 | 1 | canDetermine, u8 |
 * | resolution 118 | 32 | SHA-256 of the votes' evidence, canonical JSON |
 */
export const ATTESTATION_MAGIC = 'SIBYL';
/** The layout version of a price's message. */
export const PRICE_VERSION = 1;
/** The layout version of a resolution's message (kinds 2 and 3). */
export const RESOLUTION_VERSION = 2;
/** The newest layout version signed, as `GET /attestation/keys` states it. */
export const ATTESTATION_VERSION = RESOLUTION_VERSION;
export const KIND_PRICE = 1;
/** A resolution asked for (`POST /ai/resolve`, a scheduled AI job). */
export const KIND_RESOLUTION = 2;
/** A market's official resolution, the one its lifecycle records (docs/attestations.md#which-resolution-is-official). */
export const KIND_MARKET_RESOLUTION = 3;
export const HEADER_BYTES = 48;
export const PRICE_MESSAGE_BYTES = 94;
export const RESOLUTION_MESSAGE_BYTES = 150;
/** The winning outcome index when there is none (the question cannot be determined). */
export const NO_OUTCOME = 255;

export type AttestationMode = 'live' | 'sandbox';

interface Header {
  mode: AttestationMode;
  /** The request id of the answer (`requestId`), hashed into the message. */
  requestId: string;
  /** When the answer was made, Unix milliseconds. */
  timeMs: number;
}

export interface PriceFields extends Header {
  /** The symbol (`SOL`) or the mint address the answer is for. */
  symbolOrMint: string;
  /** The price as a decimal number (the answer's `vwapPrice`). */
  price: number;
  /** The number of sources used. */
  sources: number;
  valid: boolean;
}

export interface ResolutionFields extends Header {
  question: string;
  outcomes: readonly string[];
  context: string | null;
  marketId: string | null;
  /** The index of the winning outcome in `outcomes`; null: none. */
  winningIndex: number | null;
  /** 0 to 1; stored in basis points. */
  confidence: number;
  agreeing: number;
  models: number;
  canDetermine: boolean;
  /** Each vote's `evidence` array, in slot order: hashed as canonical JSON (`evidenceDigest`). */
  evidence: readonly (readonly unknown[])[];
}

export function sha256(data: string | Uint8Array): Buffer {
  return createHash('sha256').update(data).digest();
}

/** The 32 bytes that name a price's asset: a mint's own bytes, else the SHA-256 of the symbol (UTF-8). */
export function assetBytes(symbolOrMint: string): Uint8Array {
  if (isSolanaAddress(symbolOrMint)) {
    const bytes = decodeBase58(symbolOrMint);
    if (bytes) return bytes;
  }
  return sha256(symbolOrMint);
}

/** The canonical question: `[question, outcomes, context]` as one JSON array, UTF-8 (context null when absent). */
export function canonicalQuestion(
  question: string,
  outcomes: readonly string[],
  context: string | null,
): string {
  return JSON.stringify([question, outcomes, context]);
}

/**
 * The SHA-256 of the votes' evidence: an array of each vote's `evidence` array, in slot order, as
 * canonical JSON (keys sorted, UTF-8). `evidenceHash(record)` of `@sibyl/client` computes the same.
 */
export function evidenceDigest(evidence: readonly (readonly unknown[])[]): Buffer {
  return sha256(canonicalJson(evidence));
}

/**
 * A decimal number as Pyth states prices: an integer mantissa and a power of ten, exactly the
 * number's shortest decimal form (187.4321 → 1874321, -4; 0.00001234 → 1234, -8).
 */
export function toFixedPoint(value: number): { price: bigint; exponent: number } {
  if (!Number.isFinite(value)) throw new RangeError(`not a finite price: ${value}`);
  const [mantissa = '0', power = '0'] = String(value).toLowerCase().split('e');
  const negative = mantissa.startsWith('-');
  const [whole = '0', fraction = ''] = (negative ? mantissa.slice(1) : mantissa).split('.');
  let digits = `${whole}${fraction}`.replace(/^0+(?=\d)/, '');
  let exponent = Number(power) - fraction.length;
  // Trailing zeros of the mantissa move into the exponent (100 → 1, 2), so each number has one form.
  while (digits.length > 1 && digits.endsWith('0')) {
    digits = digits.slice(0, -1);
    exponent += 1;
  }
  const price = BigInt(digits) * (negative ? -1n : 1n);
  return { price: price === 0n ? 0n : price, exponent: price === 0n ? 0 : exponent };
}

function header(view: DataView, bytes: Uint8Array, version: number, kind: number, fields: Header): void {
  bytes.set(Buffer.from(ATTESTATION_MAGIC, 'ascii'), 0);
  view.setUint8(5, version);
  view.setUint8(6, kind);
  view.setUint8(7, fields.mode === 'live' ? 0 : 1);
  bytes.set(sha256(fields.requestId), 8);
  view.setBigInt64(40, BigInt(Math.trunc(fields.timeMs)), true);
}

function u8(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 0 || value > 255)
    throw new RangeError(`${name} is not a u8: ${value}`);
  return value;
}

/** The 94-byte message of a price. */
export function encodePrice(fields: PriceFields): Uint8Array {
  const bytes = new Uint8Array(PRICE_MESSAGE_BYTES);
  const view = new DataView(bytes.buffer);
  header(view, bytes, PRICE_VERSION, KIND_PRICE, fields);
  bytes.set(assetBytes(fields.symbolOrMint), 48);
  const { price, exponent } = toFixedPoint(fields.price);
  view.setBigInt64(80, price, true);
  view.setInt32(88, exponent, true);
  view.setUint8(92, u8(fields.sources, 'sources'));
  view.setUint8(93, fields.valid ? 1 : 0);
  return bytes;
}

/**
 * The 150-byte message of an AI resolution (version 2): kind 2 for one asked for, kind 3 for a
 * market's official resolution.
 */
export function encodeResolution(
  fields: ResolutionFields,
  kind: typeof KIND_RESOLUTION | typeof KIND_MARKET_RESOLUTION = KIND_RESOLUTION,
): Uint8Array {
  const bytes = new Uint8Array(RESOLUTION_MESSAGE_BYTES);
  const view = new DataView(bytes.buffer);
  header(view, bytes, RESOLUTION_VERSION, kind, fields);
  bytes.set(sha256(canonicalQuestion(fields.question, fields.outcomes, fields.context)), 48);
  if (fields.marketId !== null) bytes.set(sha256(fields.marketId), 80);
  view.setUint8(112, fields.winningIndex === null ? NO_OUTCOME : u8(fields.winningIndex, 'winning index'));
  view.setUint16(113, Math.round(Math.min(1, Math.max(0, fields.confidence)) * 10_000), true);
  view.setUint8(115, u8(fields.agreeing, 'agreeing'));
  view.setUint8(116, u8(fields.models, 'models'));
  view.setUint8(117, fields.canDetermine ? 1 : 0);
  bytes.set(evidenceDigest(fields.evidence), 118);
  return bytes;
}

/** A message's fields as stored, for tests and the operator (the client's decoder is `@sibyl/client`). */
export interface DecodedHeader {
  version: number;
  kind: number;
  mode: AttestationMode;
  requestIdHash: Buffer;
  timeMs: number;
}

export function decodeHeader(message: Uint8Array): DecodedHeader {
  const view = new DataView(message.buffer, message.byteOffset, message.byteLength);
  if (Buffer.from(message.subarray(0, 5)).toString('ascii') !== ATTESTATION_MAGIC)
    throw new RangeError('not a Sibyl attestation');
  return {
    version: view.getUint8(5),
    kind: view.getUint8(6),
    mode: view.getUint8(7) === 0 ? 'live' : 'sandbox',
    requestIdHash: Buffer.from(message.subarray(8, 40)),
    timeMs: Number(view.getBigInt64(40, true)),
  };
}
