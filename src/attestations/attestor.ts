import { sign } from 'node:crypto';
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { type Log, silentLog } from '../logger.js';
import type { AttestationConfig } from './config.js';
import { AttestationKeyError, type KeyPair } from './keys.js';
import {
  type AttestationMode,
  encodePrice,
  encodeResolution,
  KIND_MARKET_RESOLUTION,
  type PriceFields,
  type ResolutionFields,
} from './layout.js';
import { currentKeys, loadKeys } from './registry.js';
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

/**
 * What is signed: a price, a resolution asked for (kind 2), or a market's official resolution, the
 * one its lifecycle records (kind 3, docs/attestations.md#which-resolution-is-official).
 */
export type SignedKind =
  | { kind: 'price'; fields: PriceFields }
  | { kind: 'resolution'; fields: ResolutionFields }
  | { kind: 'market-resolution'; fields: ResolutionFields };

/**
 * The attestation port (docs/attestations.md): signs answers with the process's keys, loaded once
 * and checked against the database's list (`ready()`, which a start awaits so that a refused key
 * stops it). A rotation's notification, and a check every `syncMs`, load them again; a process
 * whose key is no longer the listed one stops signing (docs/attestations.md#rotation).
 */
export interface Attestations {
  /** Loads the keys; false: attestations are off. Throws `AttestationKeyError` when a key is refused. */
  ready(): Promise<boolean>;
  /** The current public keys, or null when off. */
  publicKeys(): Promise<Record<AttestationMode, string> | null>;
  /**
   * Whether this process signs now: false when off, or when its key was retired by a rotation
   * (then `sign` throws 503 ATTESTATION_UNAVAILABLE until the process is restarted with the new key).
   */
  signing(): Promise<boolean>;
  /** Signs one answer's message; null when attestations are off; 503 when this process's key was retired. */
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
    version: message[5] ?? 0, // the message's own layout version
  };
}

export function encode(what: SignedKind): Uint8Array {
  switch (what.kind) {
    case 'price':
      return encodePrice(what.fields);
    case 'resolution':
      return encodeResolution(what.fields);
    case 'market-resolution':
      return encodeResolution(what.fields, KIND_MARKET_RESOLUTION);
  }
}

/** How often a process that cannot sign says so again, at error level. */
const REFUSAL_LOG_EVERY_MS = 60_000;

const RETIRED =
  'This instance’s attestation key is no longer the current one (a rotation retired it): it signs nothing ' +
  'until it is restarted with the current key; retry later';

/** What a process holds: keys that sign, nothing (off), or a key a rotation retired. */
type Held =
  | { kind: 'signing'; keys: KeyPair }
  | { kind: 'off' }
  | { kind: 'retired'; keys: KeyPair | null; reason: string };

/**
 * The keys are loaded once (a start awaits `ready()`); a rotation's notification, and a check of
 * the listed keys every `syncMs` (a notification can be lost with its connection), load them again
 * in the background, so that a signature never waits on the database: on the embedded database,
 * which has one connection, a signature made inside a transaction could otherwise wait for itself.
 * A load refused after the start (the environment's key was retired by a rotation) stops signing at
 * once — an attestation by a retired key, made after its `retiredAt`, verifies nowhere — and is
 * said at error level until a load succeeds again.
 */
export function createAttestations(
  db: Database,
  config: AttestationConfig,
  clock: Clock,
  log: Log = silentLog,
): Attestations {
  let held: Held | null = null;
  let loading: Promise<Held> | null = null;
  let checking: Promise<void> | null = null;
  let stopListening: Promise<() => Promise<void>> | null = null;
  let timer: NodeJS.Timeout | undefined;
  let saidAt: number | null = null;

  function first(): Promise<Held> {
    if (held) return Promise.resolve(held);
    if (loading) return loading;
    const attempt = loadKeys(db, config, clock).then((keys): Held => {
      held = keys ? { kind: 'signing', keys } : { kind: 'off' };
      if (keys) watch();
      return held;
    });
    loading = attempt;
    // A refused first load (the start stops) is tried again on the next call.
    attempt.catch(() => {
      if (loading === attempt) loading = null;
    });
    return attempt;
  }

  function watch(): void {
    stopListening ??= db.listen(KEYS_CHANNEL, () => void check()).catch(() => async () => {});
    timer ??= setInterval(() => void check(), config.syncMs);
    timer.unref();
  }

  /** Loads the keys again unless the listed ones are those in hand; one check at a time. */
  function check(): Promise<void> {
    checking ??= recheck().finally(() => {
      checking = null;
    });
    return checking;
  }

  async function recheck(): Promise<void> {
    try {
      if (held?.kind === 'signing') {
        const listed = await currentKeys(db);
        const { live, sandbox } = held.keys;
        if (listed.live === live.publicKeyBase58 && listed.sandbox === sandbox.publicKeyBase58) return;
      }
      const keys = await loadKeys(db, config, clock);
      if (held?.kind === 'retired')
        log.info({ publicKey: keys?.live.publicKeyBase58 ?? null }, 'attestation key current again: signing');
      held = keys ? { kind: 'signing', keys } : { kind: 'off' };
      saidAt = null;
    } catch (err) {
      if (!(err instanceof AttestationKeyError)) {
        log.warn({ err }, 'attestation keys check failed; checked again');
        return;
      }
      const keys = held?.kind === 'off' ? null : (held?.keys ?? null);
      const again = held?.kind === 'retired';
      held = { kind: 'retired', keys, reason: err.message };
      // Said from the second refusal in a row: with the key file, a rotation's notification can come
      // before the new file is in place, and the next check finds it.
      if (!again) return;
      const now = clock.now().getTime();
      if (saidAt !== null && now - saidAt < REFUSAL_LOG_EVERY_MS) return;
      saidAt = now;
      log.error(
        { publicKey: keys?.live.publicKeyBase58 ?? null, reason: err.message },
        'attestation key retired: this process signs nothing (503 ATTESTATION_UNAVAILABLE, signatures of ' +
          'results retried) until it is restarted with the current key',
      );
    }
  }

  return {
    async ready() {
      return (await first()).kind !== 'off';
    },
    async publicKeys() {
      const now = await first();
      return now.kind === 'signing'
        ? { live: now.keys.live.publicKeyBase58, sandbox: now.keys.sandbox.publicKeyBase58 }
        : null;
    },
    async signing() {
      return (await first()).kind === 'signing';
    },
    async sign(what) {
      const now = await first();
      if (now.kind === 'off') return null;
      if (now.kind === 'retired') throw new AppError('ATTESTATION_UNAVAILABLE', RETIRED);
      return signMessage(now.keys, what.fields.mode, encode(what));
    },
    async close() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await checking?.catch(() => {});
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
  if (!(await attestations.signing())) throw new AppError('ATTESTATION_UNAVAILABLE', RETIRED);
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
