import { randomBytes } from 'node:crypto';
import { type Context, queryable, withTransaction } from '../context.js';
import { isForeignKeyViolation } from '../db/database.js';
import { AppError, notFound, validationError } from '../errors.js';
import { encodeBase58, isSolanaAddress } from '../lib/base58.js';
import * as sql from './wallets-sql.js';

/**
 * The wallets whose transfers count as an account's deposits (docs/deposits.md#which-wallets-count): its
 * sign-in wallet, and the others it linked by signing with them in the dashboard. A wallet belongs
 * to one account. The proof that the account holds the wallet (a signature) is the dashboard's
 * to check; these verbs keep the one-owner rule and the cap, and answer the deposit watcher's
 * question, whose wallet or reference a transfer names.
 */

/**
 * At most this many linked wallets per account: enough for a person's or a team's wallets, few
 * enough that one account cannot claim wallets by the thousand (every link is a signed message,
 * but a script signs as fast as it likes) and the funds page lists them all.
 */
export const MAX_LINKED_WALLETS = 20;

export interface AccountWallet {
  address: string;
  /** `sign-in`: the wallet the account signs in with; `linked`: one it linked by signing with it. */
  kind: 'sign-in' | 'linked';
  /** When it was linked; null for the sign-in wallet. */
  linkedAt: string | null;
}

/** The account's wallets: sign-in wallets first, then linked ones in the order they were linked. */
export async function linkedWallets(ctx: Context, accountId: string): Promise<AccountWallet[]> {
  const db = queryable(ctx);
  const [signIn, linked] = await Promise.all([
    db.query<{ address: string }>(sql.SIGN_IN_WALLETS, [accountId]),
    db.query<{ address: string; linked_at: Date }>(sql.LINKED_WALLETS, [accountId]),
  ]);
  return [
    ...signIn.map((row) => ({ address: row.address, kind: 'sign-in' as const, linkedAt: null })),
    ...linked.map((row) => ({
      address: row.address,
      kind: 'linked' as const,
      linkedAt: row.linked_at.toISOString(),
    })),
  ];
}

/**
 * Links `address` to the live account `accountId`. Linking the account's own sign-in wallet, or a
 * wallet it already linked, changes nothing and answers `linked: false`. Refused: a sandbox account
 * (never funded from the chain), a wallet that is another account's sign-in wallet or link (409
 * WALLET_IN_USE), a link beyond MAX_LINKED_WALLETS (409 MAX_WALLETS_EXCEEDED).
 *
 * Race-safe: links, first sign-ins and the operator's accounts with a wallet queue on one lock,
 * and the database keeps one owner per wallet (migration 0026), so of two claims at once, one wins.
 */
export async function linkWallet(
  ctx: Context,
  input: { accountId: string; address: string },
): Promise<{ wallet: AccountWallet; linked: boolean }> {
  const { accountId, address } = input;
  if (!isSolanaAddress(address)) {
    throw validationError([{ path: 'address', message: 'must be a base58 Solana address (32 bytes)' }]);
  }
  return withTransaction(ctx, async ({ tx, clock }) => {
    await tx.query(sql.LOCK_WALLET, [address]);
    const [account] = await tx.query<{ id: string; mode: string }>(sql.LOCK_ACCOUNT, [accountId]);
    if (!account) throw notFound(`Account ${accountId}`);
    if (account.mode !== 'live') {
      throw validationError(
        [{ path: 'mode', message: 'sandbox accounts are never funded from the chain', allowed: ['live'] }],
        'Wallets are linked to the live account: sandbox accounts are never funded from the chain',
      );
    }
    const signInOwners = (await tx.query<{ account_id: string }>(sql.SIGN_IN_OWNER, [address])).map(
      (row) => row.account_id,
    );
    if (signInOwners.includes(accountId)) {
      return { wallet: { address, kind: 'sign-in', linkedAt: null }, linked: false };
    }
    if (signInOwners.length > 0) throw inUse(address, 'signs in to another account');
    const [link] = await tx.query<{ account_id: string; linked_at: Date }>(sql.WALLET_LINK, [address]);
    if (link) {
      if (link.account_id !== accountId) throw inUse(address, 'is linked to another account');
      return { wallet: { address, kind: 'linked', linkedAt: link.linked_at.toISOString() }, linked: false };
    }
    const [count] = await tx.query<{ n: number }>(sql.COUNT_LINKED, [accountId]);
    if ((count?.n ?? 0) >= MAX_LINKED_WALLETS) {
      throw new AppError(
        'MAX_WALLETS_EXCEEDED',
        `An account links at most ${MAX_LINKED_WALLETS} wallets; unlink one first`,
        { details: { maxWallets: MAX_LINKED_WALLETS } },
      );
    }
    const now = clock.now();
    // The lock makes a conflict here impossible; were it ever bypassed, the keys of migration 0026
    // still refuse a second owner.
    const [inserted] = await tx
      .query<{ account_id: string }>(sql.LINK_WALLET, [address, accountId, now])
      .catch((err: unknown) => {
        throw isForeignKeyViolation(err) ? inUse(address, 'signs in to another account') : err;
      });
    if (!inserted) throw inUse(address, 'is linked to another account');
    return { wallet: { address, kind: 'linked', linkedAt: now.toISOString() }, linked: true };
  });
}

/** Unlinks a wallet the account linked; its sign-in wallet is not a link and stays. */
export async function unlinkWallet(
  ctx: Context,
  input: { accountId: string; address: string },
): Promise<void> {
  const [removed] = await queryable(ctx).query(sql.UNLINK_WALLET, [input.address, input.accountId]);
  if (!removed) throw notFound(`Linked wallet ${input.address}`);
}

/** The account that linked `address`, if one did (a first sign-in checks it). */
export async function walletLinkedBy(ctx: Context, address: string): Promise<string | null> {
  const [link] = await queryable(ctx).query<{ account_id: string }>(sql.WALLET_LINK, [address]);
  return link?.account_id ?? null;
}

/**
 * The live accounts each of `addresses` belongs to (its sign-in wallet or a link), one row per
 * owner: the deposit watcher's attribution, one statement for a chunk of transfers.
 */
export async function liveWalletOwners(
  ctx: Context,
  addresses: string[],
): Promise<{ address: string; accountId: string }[]> {
  if (addresses.length === 0) return [];
  const rows = await queryable(ctx).query<{ address: string; account_id: string }>(sql.LIVE_WALLET_OWNERS, [
    addresses,
  ]);
  return rows.map((row) => ({ address: row.address, accountId: row.account_id }));
}

/** The live accounts whose Solana Pay reference key is one of `keys` (docs/deposits.md#who-sent-it-attribution). */
export async function liveReferenceOwners(
  ctx: Context,
  keys: string[],
): Promise<{ key: string; accountId: string }[]> {
  if (keys.length === 0) return [];
  const rows = await queryable(ctx).query<{ key: string; account_id: string }>(sql.LIVE_REFERENCE_OWNERS, [
    keys,
  ]);
  return rows.map((row) => ({ key: row.key, accountId: row.account_id }));
}

/**
 * The account's Solana Pay reference key, drawn on first use: a random 32-byte public key in base58
 * that a payment link carries, so a transfer naming it is attributed to the account (docs/deposits.md#who-sent-it-attribution).
 */
export async function depositReference(ctx: Context, accountId: string): Promise<string> {
  const [row] = await queryable(ctx).query<{ deposit_reference: string }>(sql.DEPOSIT_REFERENCE, [
    accountId,
    encodeBase58(randomBytes(32)),
  ]);
  if (!row) throw new Error(`account ${accountId} is missing`);
  return row.deposit_reference;
}

function inUse(address: string, why: string): AppError {
  return new AppError('WALLET_IN_USE', `Wallet ${address} ${why}: a wallet belongs to one account`);
}
