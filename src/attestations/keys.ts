import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  hkdfSync,
  type KeyObject,
} from 'node:crypto';
import { decodeBase58, encodeBase58 } from '../lib/base58.js';
import { CommandRefusal } from '../lib/command-line.js';

/**
 * Ed25519 signing keys (docs/attestations.md#keys): the live key is a 64-byte keypair (seed ‖
 * public key) given in base58; the sandbox key is derived from the live seed, so one secret holds
 * both and a sandbox attestation never verifies against the live key.
 */
export interface SigningKey {
  readonly privateKey: KeyObject;
  /** The raw 32-byte public key. */
  readonly publicKey: Buffer;
  /** The public key in base58, as published. */
  readonly publicKeyBase58: string;
}

export interface KeyPair {
  live: SigningKey;
  sandbox: SigningKey;
}

/** Raised when a secret key is unusable or would change the published key silently; the start stops. */
export class AttestationKeyError extends CommandRefusal {
  override name = 'AttestationKeyError';
}

const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SANDBOX_INFO = 'sibyl attestation sandbox key v1';

function fromSeed(seed: Uint8Array): SigningKey {
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  const publicKey = createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(-32);
  return { privateKey, publicKey, publicKeyBase58: encodeBase58(publicKey) };
}

/** The live and sandbox keys of a base58 64-byte keypair (`ATTESTATION_SECRET_KEY`, the key file). */
export function keyPairFromSecret(secret: string, where: string): KeyPair {
  const bytes = decodeBase58(secret.trim());
  if (bytes?.length !== 64)
    throw new AttestationKeyError(`${where} is not a base58 64-byte Ed25519 keypair (seed and public key)`);
  const seed = bytes.subarray(0, 32);
  const live = fromSeed(seed);
  if (!live.publicKey.equals(Buffer.from(bytes.subarray(32))))
    throw new AttestationKeyError(`${where}: its last 32 bytes are not the public key of its first 32`);
  const sandboxSeed = Buffer.from(hkdfSync('sha256', seed, Buffer.alloc(0), SANDBOX_INFO, 32));
  return { live, sandbox: fromSeed(sandboxSeed) };
}

/** A new keypair, as the base58 64-byte secret that is kept. */
export function generateSecret(): string {
  const { privateKey } = generateKeyPairSync('ed25519');
  const seed = privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(-32);
  return encodeBase58(Buffer.concat([seed, fromSeed(seed).publicKey]));
}
