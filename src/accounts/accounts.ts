import { randomBytes } from 'node:crypto';
import { type Database, isUniqueViolation, type Queryable } from '../db/database.js';
import { AppError, validationError } from '../errors.js';
import { isSolanaAddress } from '../lib/base58.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import type { SecretBox } from '../webhooks/secret-box.js';
import * as sql from './sql.js';

export type AccountMode = 'live' | 'sandbox';
export type AccountStatus = 'active' | 'suspended';

export interface Account {
  id: string;
  mode: AccountMode;
  status: AccountStatus;
  walletAddress: string | null;
  balanceMicros: bigint;
  /** The webhook secret as stored: sealed when SECRET_ENCRYPTION_KEY is set (open it with a SecretBox). */
  storedWebhookSecret: string;
  createdAt: Date;
}

interface AccountRow {
  id: string;
  mode: AccountMode;
  status: AccountStatus;
  wallet_address: string | null;
  balance_micros: bigint;
  webhook_secret: string;
  created_at: Date;
}

function toAccount(row: AccountRow): Account {
  return {
    id: row.id,
    mode: row.mode,
    status: row.status,
    walletAddress: row.wallet_address,
    balanceMicros: row.balance_micros,
    storedWebhookSecret: row.webhook_secret,
    createdAt: row.created_at,
  };
}

/** Standard Webhooks secret format: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export async function createAccount(
  db: Queryable,
  clock: Clock,
  input: { mode: AccountMode; walletAddress?: string | undefined },
  secrets: SecretBox,
): Promise<Account> {
  const wallet = input.walletAddress?.trim() || null;
  if (wallet !== null && !isSolanaAddress(wallet)) {
    throw validationError([{ path: 'wallet', message: 'must be a base58 Solana address (32 bytes)' }]);
  }
  try {
    const id = newId('acct');
    const [row] = await db.query<AccountRow>(sql.INSERT_ACCOUNT, [
      id,
      input.mode,
      wallet,
      secrets.seal(newWebhookSecret(), id),
      clock.now(),
    ]);
    return toAccount(row as AccountRow);
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw validationError([{ path: 'wallet', message: 'is already connected to another account' }]);
    }
    throw err;
  }
}

/** The newest accounts first (the operator's list). */
export async function listAccounts(db: Queryable, limit: number): Promise<Account[]> {
  const rows = await db.query<AccountRow>(sql.LIST_ACCOUNTS, [limit]);
  return rows.map(toAccount);
}

export async function findAccount(db: Queryable, id: string): Promise<Account | null> {
  const [row] = await db.query<AccountRow>(sql.SELECT_ACCOUNT, [id]);
  return row ? toAccount(row) : null;
}

export async function getAccount(db: Queryable, id: string): Promise<Account> {
  const account = await findAccount(db, id);
  if (!account) throw new AppError('ACCOUNT_NOT_FOUND', `Account ${id} does not exist`);
  return account;
}

/** Suspends or reactivates; every API instance drops its cached keys of the account. */
export async function setAccountStatus(db: Database, id: string, status: AccountStatus): Promise<Account> {
  return db.transaction(async (tx) => {
    const [row] = await tx.query<AccountRow>(sql.UPDATE_STATUS, [id, status]);
    if (!row) throw new AppError('ACCOUNT_NOT_FOUND', `Account ${id} does not exist`);
    await tx.query(sql.RECORD_AUTH_CHANGE, [id]);
    return toAccount(row);
  });
}
