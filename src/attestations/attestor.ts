import { sign } from 'node:crypto';
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import type { AttestationConfig } from './config.js';
import type { KeyPair } from './keys.js';
import {
  ATTESTATION_VERSION,
  type AttestationMode,
  encodePrice,
  encodeResolution,
  type PriceFields,
  type ResolutionFields,
} from './layout.js';
import { loadKeys } from './registry.js';
import { KEYS_CHANNEL } from './sql.js';

/** A signed answer's attestation (docs/attestations.md#the-attestation). */
export interface Attestation {
  /** The message, base64. */
  message: string;
  /** The Ed25519 signature of the message, base64. */
  signature: string;
  /** The signing key, base58. */
  publicKey: string;
  version: number;
}

export type SignedKind =
  | { kind: 'price'; fields: PriceFields }
  | { kind: 'resolution'; fields: ResolutionFields };

/**
 * The attestation port (docs/attestations.md): signs answers with the process's keys, loaded once
 * and checked against the database's list (`ready()`, which a start awaits so that a refused key
 * stops it). A rotation's notification makes the next signature load the keys again.
 */
export interface Attestations {
  /** Loads the keys; false: attestations are off. Throws `AttestationKeyError` when a key is refused. */
  ready(): Promise<boolean>;
  /** The current public keys, or null when off. */
  publicKeys(): Promise<Record<AttestationMode, string> | null>;
  /** Signs one answer's message; null when attestations are off. */
  sign(what: SignedKind): Promise<Attestation | null>;
  close(): Promise<void>;
}

/** Signs `message` with the key of its mode. */
export function signMessage(keys: KeyPair, mode: AttestationMode, message: Uint8Array): Attestation {
  const key = keys[mode];
  return {
    message: Buffer.from(message).toString('base64'),
    signature: sign(null, message, key.privateKey).toString('base64'),
    publicKey: key.publicKeyBase58,
    version: ATTESTATION_VERSION,
  };
}

export function encode(what: SignedKind): Uint8Array {
  return what.kind === 'price' ? encodePrice(what.fields) : encodeResolution(what.fields);
}

/**
 * The keys are loaded once (a start awaits `ready()`); a rotation's notification loads them again in
 * the background while the keys in hand keep signing, so that a signature never waits on the
 * database: on the embedded database, which has one connection, a signature made inside a
 * transaction could otherwise wait for itself.
 */
export function createAttestations(db: Database, config: AttestationConfig, clock: Clock): Attestations {
  let current: { keys: KeyPair | null } | null = null;
  let loading: Promise<KeyPair | null> | null = null;
  let stopListening: Promise<() => Promise<void>> | null = null;

  function load(): Promise<KeyPair | null> {
    const attempt = loadKeys(db, config, clock).then((keys) => {
      current = { keys };
      return keys;
    });
    loading = attempt;
    // A refused load is tried again on the next call.
    attempt.catch(() => {
      if (loading === attempt) loading = null;
    });
    stopListening ??= db
      .listen(KEYS_CHANNEL, () => {
        // After a rotation the key file is renamed just after the commit: a refused load is retried.
        load().catch(() => setTimeout(() => load().catch(() => {}), 1000).unref());
      })
      .catch(() => async () => {});
    return attempt;
  }

  function keys(): Promise<KeyPair | null> {
    if (current) return Promise.resolve(current.keys);
    return loading ?? load();
  }

  return {
    async ready() {
      return (await keys()) !== null;
    },
    async publicKeys() {
      const pair = await keys();
      return pair && { live: pair.live.publicKeyBase58, sandbox: pair.sandbox.publicKeyBase58 };
    },
    async sign(what) {
      const pair = await keys();
      return pair && signMessage(pair, what.fields.mode, encode(what));
    },
    async close() {
      const stop = await stopListening;
      await stop?.();
    },
  };
}

/** 503 ATTESTATION_UNAVAILABLE unless this service signs (docs/attestations.md#for-the-operator); never charged. */
export async function requireAttestations(attestations: Attestations): Promise<void> {
  if (!(await attestations.ready()))
    throw new AppError(
      'ATTESTATION_UNAVAILABLE',
      'Attestations are off on this deployment (PostgreSQL without ATTESTATION_SECRET_KEY); ask without attest=true',
    );
}

/** Signs one answer; 503 ATTESTATION_UNAVAILABLE when attestations are off. */
export async function attest(attestations: Attestations, what: SignedKind): Promise<Attestation> {
  const signed = await attestations.sign(what);
  if (!signed) {
    await requireAttestations(attestations);
    throw new AppError('ATTESTATION_UNAVAILABLE', 'Attestations are off on this deployment');
  }
  return signed;
}
