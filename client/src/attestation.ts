// The attestation message: a fixed little-endian layout, versioned (docs/attestations.md).
import { base64ToBytes, bytesToHex } from './encoding.js';

/** An answer's `attestation` field: what Sibyl signed and how to check it. */
export interface Attestation {
  /** The signed message, base64 (the layout `decodeAttestation` reads). */
  message: string;
  /** The Ed25519 signature over the message's bytes, base64 (64 bytes). */
  signature: string;
  /** The signing key, base58 (32 bytes): one of `GET /api/v1/attestation/keys`. */
  publicKey: string;
  /** The layout's version (the message's own version byte). */
  version: number;
}

/**
 * The newest layout version this client reads: prices are version 1, resolutions version 2 (version
 * 1's fields, then the digest of the votes' evidence); it reads version 1 resolutions too.
 */
export const ATTESTATION_VERSION = 2;
/** The first 5 bytes of every message: `SIBYL` in ASCII. */
export const ATTESTATION_MAGIC = 'SIBYL';
/** The size of a price message (version 1), in bytes. */
export const PRICE_ATTESTATION_SIZE = 94;
/** The size of a resolution message (version 2, kinds 2 and 3), in bytes. */
export const RESOLUTION_ATTESTATION_SIZE = 150;
/** The size of a version 1 resolution message (signed before version 2), in bytes. */
export const RESOLUTION_V1_ATTESTATION_SIZE = 118;

interface AttestationHeader {
  version: number;
  /** `sandbox` messages are signed by the sandbox key and never settle anything real. */
  mode: 'live' | 'sandbox';
  /** SHA-256 of the answer's `requestId`, hex (`hashRequestId`). */
  requestIdHash: string;
  /** When the answer was made, Unix milliseconds. */
  madeAt: number;
}

/** A signed price (a price asked with `attest=true`, or a scheduled price check's result). */
export interface PriceAttestationFields extends AttestationHeader {
  kind: 'price';
  /** SHA-256 of the symbol, or the mint's own 32 bytes, hex (`hashSymbol`). */
  symbolHash: string;
  /** The price as Pyth gives it: `price × 10^exponent`. */
  price: bigint;
  exponent: number;
  /** How many sources the price was made from. */
  sources: number;
  valid: boolean;
}

/**
 * A signed AI resolution (a COMPLETED one): `resolution` (kind 2) for one asked for
 * (`POST /ai/resolve`, a scheduled AI job), `market-resolution` (kind 3) for a market's official
 * resolution, the one its lifecycle records (docs/attestations.md#which-resolution-is-official):
 * then `requestIdHash` and `marketIdHash` are both the SHA-256 of the market id.
 */
export interface ResolutionAttestationFields extends AttestationHeader {
  kind: 'resolution' | 'market-resolution';
  /** SHA-256 of the canonical question, hex (`hashQuestion`). */
  questionHash: string;
  /** SHA-256 of the market id, hex, or null when the request named no market. */
  marketIdHash: string | null;
  /** The index of the winning outcome in `outcomes`, or null when there is none. */
  outcomeIndex: number | null;
  /** Confidence in basis points (0–10000). */
  confidence: number;
  /** How many models agreed on the outcome. */
  agreeing: number;
  /** How many models were asked. */
  models: number;
  canDetermine: boolean;
  /**
   * SHA-256 of the votes' evidence as canonical JSON, hex (`evidenceHash(record)` recomputes it);
   * null in a version 1 message, which has none.
   */
  evidenceHash: string | null;
}

export type AttestationFields = PriceAttestationFields | ResolutionAttestationFields;

const KINDS = { 1: 'price', 2: 'resolution', 3: 'market-resolution' } as const;
/** The kinds each version has. */
const VERSION_KINDS: Record<number, readonly string[]> = {
  1: ['price', 'resolution'],
  2: ['resolution', 'market-resolution'],
};
const MODES = { 0: 'live', 1: 'sandbox' } as const;
const HEADER_SIZE = 5 + 1 + 1 + 1 + 32 + 8;

/** The message's bytes from an attestation, its base64 message, or the bytes themselves. */
export function attestationMessageBytes(
  message: Uint8Array | string | Pick<Attestation, 'message'>,
): Uint8Array {
  if (message instanceof Uint8Array) return message;
  return base64ToBytes(typeof message === 'string' ? message : message.message);
}

/**
 * Reads a message into its fields. It does not check the signature (`verifyAttestation` does):
 * decode what has been verified. Throws on a message that is not a Sibyl attestation of a
 * version this client knows (wrong magic, version, kind, mode or length).
 */
export function decodeAttestation(
  message: Uint8Array | string | Pick<Attestation, 'message'>,
): AttestationFields {
  const bytes = attestationMessageBytes(message);
  const fail = (why: string): never => {
    throw new Error(`decodeAttestation: ${why}`);
  };
  if (bytes.length < HEADER_SIZE) fail(`${bytes.length} bytes is too short for an attestation`);
  const magic = String.fromCharCode(...bytes.subarray(0, 5));
  if (magic !== ATTESTATION_MAGIC) fail('not a Sibyl attestation (the message does not start with "SIBYL")');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint8(5);
  const kinds = VERSION_KINDS[version];
  if (kinds === undefined) {
    fail(`version ${version} is not known to this client (it reads versions 1 and ${ATTESTATION_VERSION})`);
  }
  const kind = KINDS[view.getUint8(6) as keyof typeof KINDS] ?? fail(`unknown kind ${view.getUint8(6)}`);
  if (!kinds?.includes(kind)) fail(`a version ${version} message has no kind ${view.getUint8(6)} (${kind})`);
  const mode = MODES[view.getUint8(7) as keyof typeof MODES] ?? fail(`unknown mode ${view.getUint8(7)}`);
  const size =
    kind === 'price'
      ? PRICE_ATTESTATION_SIZE
      : version === 1
        ? RESOLUTION_V1_ATTESTATION_SIZE
        : RESOLUTION_ATTESTATION_SIZE;
  if (bytes.length !== size)
    fail(`a version ${version} ${kind} message has ${size} bytes, not ${bytes.length}`);
  const header = {
    version,
    mode,
    requestIdHash: bytesToHex(bytes.subarray(8, 40)),
    madeAt: Number(view.getBigInt64(40, true)),
  };
  const flag = (offset: number): boolean => {
    const value = view.getUint8(offset);
    return value === 1 ? true : value === 0 ? false : fail(`byte ${offset} is ${value}, not 0 or 1`);
  };
  if (kind === 'price') {
    return {
      ...header,
      kind,
      symbolHash: bytesToHex(bytes.subarray(48, 80)),
      price: view.getBigInt64(80, true),
      exponent: view.getInt32(88, true),
      sources: view.getUint8(92),
      valid: flag(93),
    };
  }
  const market = bytes.subarray(80, 112);
  const outcome = view.getUint8(112);
  return {
    ...header,
    kind,
    questionHash: bytesToHex(bytes.subarray(48, 80)),
    marketIdHash: market.every((byte) => byte === 0) ? null : bytesToHex(market),
    outcomeIndex: outcome === 255 ? null : outcome,
    confidence: view.getUint16(113, true),
    agreeing: view.getUint8(115),
    models: view.getUint8(116),
    canDetermine: flag(117),
    evidenceHash: version === 1 ? null : bytesToHex(bytes.subarray(118, 150)),
  };
}
