import { type Context, queryable, type TxContext } from '../context.js';
import { AppError } from '../errors.js';
import type { SecretBox } from '../webhooks/index.js';
import { createAccount } from './accounts.js';
import { createSandboxAccount } from './sandbox.js';
import { walletLinkedBy } from './wallets.js';
import * as sql from './wallets-sql.js';

/** A wallet that signed in, and the accounts it reaches. */
export interface WalletAccounts {
  address: string;
  liveAccountId: string;
  sandboxAccountId: string;
}

interface WalletRow {
  address: string;
  live_account_id: string;
  sandbox_account_id: string;
}

/**
 * The wallet's accounts, made on its first sign-in (docs/dashboard.md#accounts): a live account with the wallet as
 * its `walletAddress` and a balance of 0, and a sandbox account with 100.00 USD of play money. A
 * wallet the operator already gave to an account (`sibyl accounts create --wallet`) signs in to
 * that account, which takes its mode's place; only the other one is made. `created` is true when
 * the live account was made now.
 */
export async function walletAccounts(
  ctx: TxContext,
  secrets: SecretBox,
  address: string,
): Promise<{ wallet: WalletAccounts; created: boolean }> {
  const { tx, clock } = ctx;
  await tx.query(sql.LOCK_WALLET, [address]);
  const [known] = await tx.query<WalletRow>(sql.SIGN_IN_WALLET, [address]);
  if (known) return { wallet: toWallet(known), created: false };
  // A wallet belongs to one account: one another account linked (docs/dashboard.md#your-wallets)
  // gets no accounts of its own, which would make its deposits nobody's.
  const linkedBy = await walletLinkedBy(ctx, address);
  if (linkedBy !== null) {
    throw new AppError(
      'WALLET_IN_USE',
      'This wallet is linked to another account (a wallet belongs to one account): unlink it there to sign in with it',
    );
  }

  const [given] = await tx.query<{ id: string; mode: 'live' | 'sandbox' }>(sql.ACCOUNT_BY_WALLET, [address]);
  // A wallet belongs to one account: when the operator gave it to a sandbox account, the live
  // account made here has none (docs/dashboard.md#accounts).
  const live =
    given?.mode === 'live'
      ? given.id
      : (await createAccount(ctx, { mode: 'live', walletAddress: given ? undefined : address }, secrets)).id;
  const sandbox = given?.mode === 'sandbox' ? given.id : (await createSandboxAccount(ctx, secrets)).id;
  await tx.query(sql.INSERT_SIGN_IN_WALLET, [address, live, sandbox, clock.now()]);
  return {
    wallet: { address, liveAccountId: live, sandboxAccountId: sandbox },
    created: given?.mode !== 'live',
  };
}

/** The accounts of a wallet that signed in to the dashboard (a session's), or null for one that never did. */
export async function signInWallet(ctx: Context, address: string): Promise<WalletAccounts | null> {
  const [row] = await queryable(ctx).query<WalletRow>(sql.SIGN_IN_WALLET, [address]);
  return row ? toWallet(row) : null;
}

function toWallet(row: WalletRow): WalletAccounts {
  return {
    address: row.address,
    liveAccountId: row.live_account_id,
    sandboxAccountId: row.sandbox_account_id,
  };
}
