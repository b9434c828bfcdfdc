// Checking an attestation off chain: WebCrypto Ed25519 (Node 20.19+, current browsers).
import { type Attestation, attestationMessageBytes, decodeAttestation } from './attestation.js';
import { base58ToBytes, base64ToBytes, bytesToHex, sha256 } from './encoding.js';

export interface VerifyAttestationOptions {
  /** `live` refuses a sandbox attestation (and `sandbox` a live one), whatever key signed it. */
  mode?: 'live' | 'sandbox';
}

/**
 * True when `attestation.signature` is a valid Ed25519 signature of `attestation.message` by
 * `attestation.publicKey`, that key is one of `publicKeys` (base58, as `GET
 * /api/v1/attestation/keys` lists them: pass the current key and the retired ones you still
 * accept), and the message is a Sibyl attestation (of `options.mode`, when given). False
 * otherwise: it never throws on a bad attestation.
 */
export async function verifyAttestation(
  attestation: Attestation,
  publicKeys: string | Iterable<string>,
  options: VerifyAttestationOptions = {},
): Promise<boolean> {
  const trusted = new Set(typeof publicKeys === 'string' ? [publicKeys] : publicKeys);
  if (!trusted.has(attestation.publicKey)) return false;
  try {
    const message = attestationMessageBytes(attestation);
    const fields = decodeAttestation(message);
    if (fields.version !== attestation.version) return false;
    if (options.mode !== undefined && fields.mode !== options.mode) return false;
    const signature = base64ToBytes(attestation.signature);
    const publicKey = base58ToBytes(attestation.publicKey);
    if (signature.length !== 64 || publicKey.length !== 32) return false;
    const subtle = globalThis.crypto.subtle;
    const key = await subtle.importKey('raw', publicKey, { name: 'Ed25519' }, false, ['verify']);
    return await subtle.verify({ name: 'Ed25519' }, key, signature, message);
  } catch {
    return false;
  }
}

const utf8 = (text: string) => new TextEncoder().encode(text);

/** SHA-256 of a request id, hex: compare with a decoded attestation's `requestIdHash`. */
export async function hashRequestId(requestId: string): Promise<string> {
  return bytesToHex(await sha256(utf8(requestId)));
}

/** SHA-256 of a market id, hex: compare with a decoded resolution's `marketIdHash`. */
export async function hashMarketId(marketId: string): Promise<string> {
  return bytesToHex(await sha256(utf8(marketId)));
}

/**
 * The 32 bytes that name a price's asset, hex: compare with a decoded price's `symbolHash`. A mint
 * address (base58, 32 bytes) is its own bytes; a symbol (as the answer's `symbol` states it, e.g.
 * `SOL`) is hashed with SHA-256.
 */
export async function hashSymbol(symbolOrMint: string): Promise<string> {
  if (symbolOrMint.length >= 32 && symbolOrMint.length <= 44) {
    try {
      const bytes = base58ToBytes(symbolOrMint);
      if (bytes.length === 32) return bytesToHex(bytes);
    } catch {
      // not base58: a symbol
    }
  }
  return bytesToHex(await sha256(utf8(symbolOrMint)));
}

/**
 * The canonical question's SHA-256, hex: compare with a decoded resolution's `questionHash` to
 * check that Sibyl answered the question you asked. The canonical question is
 * `JSON.stringify([question, outcomes, context ?? null])` as UTF-8: pass the request's own
 * `question`, `outcomes` and `context` exactly as sent.
 */
export async function hashQuestion(
  question: string,
  outcomes: readonly string[],
  context?: string | null,
): Promise<string> {
  return bytesToHex(await sha256(utf8(JSON.stringify([question, outcomes, context ?? null]))));
}
