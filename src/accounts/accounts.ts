import { type Context, queryable, type TxContext, withTransaction } from '../context.js';
import { isForeignKeyViolation, isUniqueViolation } from '../db/database.js';
import { AppError, validationError } from '../errors.js';
import { isSolanaAddress } from '../lib/base58.js';
import { newId } from '../lib/ids.js';
import { createWebhookSecret, type SecretBox } from '../webhooks/index.js';
import * as sql from './sql.js';
import { LOCK_WALLET, WALLET_HOLDER } from './wallets-sql.js';

/** Usable keys (neither revoked nor expired) an account may hold at once, rotation grace periods included. */
export const MAX_ACTIVE_KEYS = 25;

export type AccountMode = 'live' | 'sandbox';
export type AccountStatus = 'active' | 'suspended';

export interface Account {
  id: string;
  mode: AccountMode;
  status: AccountStatus;
  walletAddress: string | null;
  balanceMicros: bigint;
  createdAt: Date;
}

interface AccountRow {
  id: string;
  mode: AccountMode;
  status: AccountStatus;
  wallet_address: string | null;
  balance_micros: bigint;
  created_at: Date;
}

function toAccount(row: AccountRow): Account {
  return {
    id: row.id,
    mode: row.mode,
    status: row.status,
    walletAddress: row.wallet_address,
    balanceMicros: row.balance_micros,
    createdAt: row.created_at,
  };
}

/**
 * A new account with a fresh webhook secret, sealed by `secrets` (a port, after the input) and kept
 * by the webhooks room (`createWebhookSecret`), in one transaction. A wallet belongs to one account
 * (docs/deposits.md#which-wallets-count): one that already signs in to an account or is linked to
 * one is refused, 409 WALLET_IN_USE naming that account. The check runs
 * under the wallet's lock, which first sign-ins and links take too; the database's own rule
 * (migration 0026) refuses a second owner even if it did not.
 */
export async function createAccount(
  ctx: Context,
  input: { mode: AccountMode; walletAddress?: string | undefined },
  secrets: SecretBox,
): Promise<Account> {
  const wallet = input.walletAddress?.trim() || null;
  if (wallet !== null && !isSolanaAddress(wallet)) {
    throw validationError([{ path: 'wallet', message: 'must be a base58 Solana address (32 bytes)' }]);
  }
  const id = newId('acct');
  // The account and its webhook signing secret (the webhooks room's row) commit together.
  const insert = async (tx: TxContext) => {
    const [row] = await tx.tx.query<AccountRow>(sql.INSERT_ACCOUNT, [
      id,
      input.mode,
      wallet,
      ctx.clock.now(),
    ]);
    await createWebhookSecret(tx, secrets, id);
    return toAccount(row as AccountRow);
  };
  if (wallet === null) return withTransaction(ctx, insert);
  try {
    return await withTransaction(ctx, async (tx) => {
      await tx.tx.query(LOCK_WALLET, [wallet]);
      const [holder] = await tx.tx.query<{ account_id: string; claim: string }>(WALLET_HOLDER, [wallet]);
      if (holder) {
        const how = holder.claim === 'linked' ? 'is linked to' : 'signs in to';
        throw new AppError(
          'WALLET_IN_USE',
          `Wallet ${wallet} ${how} account ${holder.account_id}: a wallet belongs to one account`,
          { details: { wallet, accountId: holder.account_id } },
        );
      }
      return insert(tx);
    });
  } catch (err) {
    if (isUniqueViolation(err) || isForeignKeyViolation(err)) {
      throw new AppError('WALLET_IN_USE', `Wallet ${wallet} belongs to another account`, {
        details: { wallet },
      });
    }
    throw err;
  }
}

/** The newest accounts first (the operator's list). */
export async function listAccounts(ctx: Context, input: { limit: number }): Promise<Account[]> {
  const rows = await queryable(ctx).query<AccountRow>(sql.LIST_ACCOUNTS, [input.limit]);
  return rows.map(toAccount);
}

export async function findAccount(ctx: Context, id: string): Promise<Account | null> {
  const [row] = await queryable(ctx).query<AccountRow>(sql.SELECT_ACCOUNT, [id]);
  return row ? toAccount(row) : null;
}

export async function getAccount(ctx: Context, id: string): Promise<Account> {
  const account = await findAccount(ctx, id);
  if (!account) throw new AppError('ACCOUNT_NOT_FOUND', `Account ${id} does not exist`);
  return account;
}

/** Suspends or reactivates; every API instance drops its cached keys of the account. */
export async function setAccountStatus(
  ctx: Context,
  { accountId: id, status }: { accountId: string; status: AccountStatus },
): Promise<Account> {
  return withTransaction(ctx, async ({ tx }) => {
    const [row] = await tx.query<AccountRow>(sql.UPDATE_STATUS, [id, status]);
    if (!row) throw new AppError('ACCOUNT_NOT_FOUND', `Account ${id} does not exist`);
    await tx.query(sql.RECORD_AUTH_CHANGE, [id]);
    return toAccount(row);
  });
}
