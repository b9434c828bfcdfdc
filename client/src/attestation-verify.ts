// Checking an attestation off chain: WebCrypto Ed25519 (Node 20.19+, current browsers).
import { type Attestation, attestationMessageBytes, decodeAttestation } from './attestation.js';
import { canonicalJson } from './canonical-json.js';
import { base58ToBytes, base64ToBytes, bytesToHex, sha256 } from './encoding.js';

export interface VerifyAttestationOptions {
  /** `live` refuses a sandbox attestation (and `sandbox` a live one), whatever key signed it. */
  mode?: 'live' | 'sandbox';
}

/** `GET /api/v1/attestation/keys`'s answer, or the part of it `verifyAttestation` reads. */
export interface AttestationKeySet {
  keys: readonly {
    publicKey: string;
    mode: 'live' | 'sandbox';
    retiredAt: string | null;
    /** Set: the key is compromised, and nothing it signed is trusted (absent from older services). */
    compromisedAt?: string | null;
  }[];
}

function isKeySet(value: Iterable<string> | AttestationKeySet): value is AttestationKeySet {
  // Not `'keys' in value`: arrays and sets have a `keys` method.
  return Array.isArray((value as { keys?: unknown }).keys);
}

/** Whether `publicKeys` trusts `publicKey` for a message of `mode` made at `madeAt`. */
function trusts(
  publicKeys: string | Iterable<string> | AttestationKeySet,
  publicKey: string,
  mode: 'live' | 'sandbox',
  madeAt: number,
): boolean {
  if (typeof publicKeys === 'string') return publicKeys === publicKey;
  if (isKeySet(publicKeys)) {
    return publicKeys.keys.some(
      (key) =>
        key.publicKey === publicKey &&
        key.mode === mode &&
        // A compromised key's holder can write any time into a message: nothing it signed counts.
        (key.compromisedAt ?? null) === null &&
        (key.retiredAt === null || madeAt <= Date.parse(key.retiredAt)),
    );
  }
  return new Set(publicKeys).has(publicKey);
}

/**
 * True when `attestation.signature` is a valid Ed25519 signature of `attestation.message` by
 * `attestation.publicKey`, that key is trusted, and the message is a Sibyl attestation (of
 * `options.mode`, when given). False otherwise: it never throws on a bad attestation.
 *
 * `publicKeys` is either the keys you trust (base58; pass the current key and the retired ones you
 * still accept), or `GET /api/v1/attestation/keys`'s answer as it is: then the key must be listed
 * for the message's mode (a sandbox key never passes a live message), a retired key only for
 * what it signed before its `retiredAt`, and a compromised key (`compromisedAt` set) for nothing.
 */
export async function verifyAttestation(
  attestation: Attestation,
  publicKeys: string | Iterable<string> | AttestationKeySet,
  options: VerifyAttestationOptions = {},
): Promise<boolean> {
  try {
    const message = attestationMessageBytes(attestation);
    const fields = decodeAttestation(message);
    if (!trusts(publicKeys, attestation.publicKey, fields.mode, fields.madeAt)) return false;
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
 * `question`, `outcomes` and `context` exactly as sent (no context and `""` are different
 * questions), or the record's `question`, `outcomes` and `context`, which are those.
 */
export async function hashQuestion(
  question: string,
  outcomes: readonly string[],
  context?: string | null,
): Promise<string> {
  return bytesToHex(await sha256(utf8(JSON.stringify([question, outcomes, context ?? null]))));
}

/** What `evidenceHash` reads: an answer with its votes (each with its `evidence`), in slot order. */
export interface WithVotesEvidence {
  votes: readonly { evidence: readonly unknown[] }[];
}

/**
 * The SHA-256 of the votes' evidence, hex: compare with a decoded version 2 resolution's
 * `evidenceHash`, to check that the evidence you read is the evidence Sibyl signed. Give it the
 * poll answer (`GET /ai/request/:requestId`, an item of `GET /ai/requests`), a completed
 * callback's `data`, a scheduled AI job's `result`, or a market's `resolution` (`GET /markets/:id`):
 * each has `votes` in slot order. It hashes `votes.map((v) => v.evidence)` as canonical JSON
 * (keys sorted at every level, UTF-8).
 */
export async function evidenceHash(record: WithVotesEvidence): Promise<string> {
  return bytesToHex(await sha256(utf8(canonicalJson(record.votes.map((vote) => vote.evidence)))));
}
