import { createPublicKey, randomBytes, verify } from 'node:crypto';
import { createSignInMessageText, parseSignInMessageText } from '@solana/wallet-standard-util';
import { validationError } from '../errors.js';
import { decodeBase58, encodeBase58, isSolanaAddress } from '../lib/base58.js';

/**
 * Sign-In With Solana (Phantom's SIWS, the Wallet Standard's `solana:signIn`): the input the server
 * makes, the text a wallet signs for it, and the Ed25519 check of the signature. The text format is
 * the Wallet Standard's own `createSignInMessageText` (@solana/wallet-standard-util 1.1.2, the last
 * version whose engines allow Node 20), the same function the dashboard page uses for wallets that
 * only offer `solana:signMessage`; the signature is checked with Node's built-in Ed25519.
 */

/** The statement every sign-in input carries: what the wallet's owner is asked to agree to. */
export const SIGN_IN_STATEMENT = 'Sign in to the Sibyl dashboard.';
/** The statement of an input that links another wallet to an account: it names the account. */
export function linkStatement(accountId: string): string {
  return `Link this wallet to Sibyl account ${accountId}: its SOL and USDC deposits are credited to that account.`;
}
/** How long a sign-in input may be signed and verified after it was issued. */
export const CHALLENGE_TTL_MS = 5 * 60 * 1000;

/** A `SolanaSignInInput` as this server makes it: every field set but, optionally, the address. */
export interface SignInInput {
  domain: string;
  uri: string;
  statement: string;
  version: '1';
  chainId: string;
  nonce: string;
  issuedAt: string;
  expirationTime: string;
  address?: string;
}

/** Where sign-in happens: this server's own domain and URI, and the chain it names. */
export interface SignInPlace {
  /** The host (and port) of the dashboard's origin, e.g. `app.example.com` or `127.0.0.1:3000`. */
  domain: string;
  /** The dashboard's origin, e.g. `https://app.example.com`. */
  uri: string;
  chainId: string;
}

/** At least 16 base58 characters (docs/dashboard.md#sign-in-with-solana): 16 random bytes make 21 or 22. */
export function newNonce(): string {
  return encodeBase58(randomBytes(16));
}

export function makeSignInInput(
  place: SignInPlace,
  now: Date,
  address?: string,
  statement: string = SIGN_IN_STATEMENT,
): SignInInput {
  return {
    domain: place.domain,
    uri: place.uri,
    statement,
    version: '1',
    chainId: place.chainId,
    nonce: newNonce(),
    issuedAt: now.toISOString(),
    expirationTime: new Date(now.getTime() + CHALLENGE_TTL_MS).toISOString(),
    ...(address === undefined ? {} : { address }),
  };
}

/** The exact text a wallet signs for `input` on behalf of `address`. */
export function signInMessageText(input: SignInInput, address: string): string {
  return createSignInMessageText({ ...input, address });
}

/** The fields a signed message claims, or null when it is not a SIWS message in valid UTF-8. */
export function readSignedMessage(
  message: Uint8Array,
): { nonce?: string; domain: string; uri?: string } | null {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(message);
  } catch {
    return null;
  }
  const parsed = parseSignInMessageText(text);
  if (!parsed) return null;
  return {
    domain: parsed.domain,
    ...(parsed.nonce === undefined ? {} : { nonce: parsed.nonce }),
    ...(parsed.uri === undefined ? {} : { uri: parsed.uri }),
  };
}

// An Ed25519 public key in the SubjectPublicKeyInfo DER form Node's crypto reads: this fixed prefix
// (RFC 8410: SEQUENCE, the id-Ed25519 OID 1.3.101.112, a 32-byte BIT STRING) and the raw key.
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/**
 * Refuses an address that is not a Solana address — base58 that decodes to exactly 32 bytes, as the
 * schemas state (routes/auth.ts `Address`) — with VALIDATION_ERROR naming `path`: the pattern and the
 * length alone admit strings that decode to 24 or 33 bytes.
 */
export function requireAddress(address: string, path: string): void {
  if (!isSolanaAddress(address)) {
    throw validationError([{ path, message: 'must be a base58 Solana address (32 bytes)' }]);
  }
}

/** True when `signature` is `address`'s Ed25519 signature of `message`. */
export function verifyWalletSignature(address: string, message: Uint8Array, signature: Uint8Array): boolean {
  const key = decodeBase58(address);
  if (key?.length !== 32 || signature.length !== 64) return false;
  try {
    const publicKey = createPublicKey({
      key: Buffer.concat([ED25519_SPKI_PREFIX, key]),
      format: 'der',
      type: 'spki',
    });
    return verify(null, message, publicKey, signature);
  } catch {
    // A 32-byte string that is not a point on the curve is no one's key.
    return false;
  }
}
