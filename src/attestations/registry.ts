import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Database, Queryable } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { AttestationConfig } from './config.js';
import { AttestationKeyError, generateSecret, type KeyPair, keyPairFromSecret } from './keys.js';
import type { AttestationMode } from './layout.js';
import {
  CURRENT_KEYS,
  INSERT_CURRENT,
  LIST_KEYS,
  MARK_COMPROMISED,
  NOTIFY_KEYS,
  RETIRE_CURRENT,
} from './sql.js';

/** The embedded database's key file, in its data directory (docs/attestations.md#keys). */
export const KEY_FILE = 'attestation-secret-key';
const ENV = 'ATTESTATION_SECRET_KEY';

export interface KeyRecord {
  publicKey: string;
  mode: AttestationMode;
  createdAt: string;
  retiredAt: string | null;
  compromisedAt: string | null;
}

interface KeyRow {
  public_key: string;
  mode: AttestationMode;
  created_at: Date;
  retired_at: Date | null;
  compromised_at: Date | null;
}

function record(row: KeyRow): KeyRecord {
  return {
    publicKey: row.public_key,
    mode: row.mode,
    createdAt: row.created_at.toISOString(),
    retiredAt: row.retired_at?.toISOString() ?? null,
    compromisedAt: row.compromised_at?.toISOString() ?? null,
  };
}

/** Every listed key, current first, then the retired ones, newest first. */
export async function listKeys(db: Queryable): Promise<KeyRecord[]> {
  return (await db.query<KeyRow>(LIST_KEYS)).map(record);
}

/** Where the secret comes from: the environment, the embedded database's key file, or nowhere (off). */
export type SecretSource = { kind: 'env'; secret: string } | { kind: 'file'; path: string } | { kind: 'off' };

export function secretSource(config: AttestationConfig, db: Pick<Database, 'dataDir'>): SecretSource {
  if (config.secretKey) return { kind: 'env', secret: config.secretKey };
  if (db.dataDir) return { kind: 'file', path: join(db.dataDir, KEY_FILE) };
  return { kind: 'off' };
}

async function readSecret(path: string): Promise<string | null> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** The public keys the database lists as current, by mode. */
export async function currentKeys(db: Queryable): Promise<Partial<Record<AttestationMode, string>>> {
  const rows = await db.query<KeyRow>(CURRENT_KEYS);
  return Object.fromEntries(rows.map((row) => [row.mode, row.public_key]));
}

/**
 * The signing keys of this process, checked against the keys the database lists as current: a
 * first start lists them; a key that differs from the listed one is refused, never adopted
 * silently (a rotation is `sibyl attestation rotate`). Null: attestations are off (PostgreSQL
 * without `ATTESTATION_SECRET_KEY`).
 */
export async function loadKeys(
  db: Database,
  config: AttestationConfig,
  clock: Clock,
): Promise<KeyPair | null> {
  const source = secretSource(config, db);
  if (source.kind === 'off') return null;
  if (source.kind === 'env') return adopt(db, keyPairFromSecret(source.secret, ENV), clock, ENV);
  const secret = await readSecret(source.path);
  if (secret !== null) return adopt(db, keyPairFromSecret(secret, source.path), clock, source.path);
  const listed = (await currentKeys(db)).live;
  if (listed)
    throw new AttestationKeyError(
      `The attestation key file ${source.path} is missing, but the database lists ${listed} as the current ` +
        'attestation key. Restore the file from a backup of the data directory, or run `sibyl attestation ' +
        'rotate` to retire that key and make a new one (docs/attestations.md#rotation).',
    );
  const fresh = generateSecret();
  await writeFile(source.path, `${fresh}\n`, { mode: 0o600, flag: 'wx' });
  return adopt(db, keyPairFromSecret(fresh, source.path), clock, source.path);
}

async function adopt(db: Database, pair: KeyPair, clock: Clock, where: string): Promise<KeyPair> {
  let current = await currentKeys(db);
  if (!current.live || !current.sandbox) {
    const now = clock.now();
    await db.transaction(async (tx) => {
      await tx.query(INSERT_CURRENT, [pair.live.publicKeyBase58, 'live', now]);
      await tx.query(INSERT_CURRENT, [pair.sandbox.publicKeyBase58, 'sandbox', now]);
    });
    current = await currentKeys(db);
  }
  if (current.live !== pair.live.publicKeyBase58 || current.sandbox !== pair.sandbox.publicKeyBase58)
    throw new AttestationKeyError(
      `The attestation key of ${where} (public key ${pair.live.publicKeyBase58}) is not the current key the ` +
        `database lists (${current.live ?? 'none'}). Sibyl never signs with another key silently: to change ` +
        'keys, run `sibyl attestation rotate` with the new key set (docs/attestations.md#rotation).',
    );
  return pair;
}

export interface Rotation {
  retired: string[];
  current: { live: string; sandbox: string };
}

/**
 * Retires the current keys and lists the next (docs/attestations.md#rotation): with the key file,
 * a new key is made and the file replaced; with `ATTESTATION_SECRET_KEY`, the operator has set the
 * new key there, which must differ from the current one. Running processes are told (a
 * notification) and take the new key.
 */
export async function rotateKeys(
  db: Database,
  config: AttestationConfig,
  clock: Clock,
  options: { compromised?: boolean } = {},
): Promise<Rotation> {
  const source = secretSource(config, db);
  if (source.kind === 'off')
    throw new AttestationKeyError(
      'Attestations are off: on PostgreSQL, set ATTESTATION_SECRET_KEY (docs/attestations.md#for-the-operator).',
    );
  const fresh = source.kind === 'env' ? source.secret : generateSecret();
  const pair = keyPairFromSecret(fresh, source.kind === 'env' ? ENV : 'the new key');
  const current = await currentKeys(db);
  if (current.live === pair.live.publicKeyBase58)
    throw new AttestationKeyError(
      `ATTESTATION_SECRET_KEY is the current key (${current.live}): set the new key there, then rotate.`,
    );
  const pending = source.kind === 'file' ? `${source.path}.new` : null;
  if (pending) await writeFile(pending, `${fresh}\n`, { mode: 0o600 });
  const now = clock.now();
  const retired = await db.transaction(async (tx) => {
    const rows = await tx.query<{ public_key: string }>(RETIRE_CURRENT, [now, options.compromised === true]);
    await tx.query(INSERT_CURRENT, [pair.live.publicKeyBase58, 'live', now]);
    await tx.query(INSERT_CURRENT, [pair.sandbox.publicKeyBase58, 'sandbox', now]);
    await tx.query(NOTIFY_KEYS);
    return rows.map((row) => row.public_key);
  });
  if (pending && source.kind === 'file') await rename(pending, source.path);
  return { retired, current: { live: pair.live.publicKeyBase58, sandbox: pair.sandbox.publicKeyBase58 } };
}

/**
 * Marks a retired key compromised (docs/attestations.md#rotation), with the other key of its pair:
 * from then on nothing either signed verifies, whatever time its message states. A current key is
 * refused: `sibyl attestation rotate --compromised` retires and marks it at once.
 */
export async function markCompromised(db: Database, publicKey: string, clock: Clock): Promise<string[]> {
  const listed = (await listKeys(db)).find((key) => key.publicKey === publicKey);
  if (!listed)
    throw new AttestationKeyError(`No attestation key ${publicKey} is listed (sibyl attestation keys).`);
  if (listed.retiredAt === null)
    throw new AttestationKeyError(
      `${publicKey} is a current key: run \`sibyl attestation rotate --compromised\` with the new key set.`,
    );
  const rows = await db.query<{ public_key: string }>(MARK_COMPROMISED, [publicKey, clock.now()]);
  return rows.map((row) => row.public_key);
}
