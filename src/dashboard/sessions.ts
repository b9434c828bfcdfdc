import { createHash, randomBytes } from 'node:crypto';
import { signInWallet, type WalletAccounts } from '../accounts/index.js';
import { type Context, queryable, type TxContext } from '../context.js';
import { randomBase62 } from '../lib/ids.js';
import * as sql from './sql.js';

/** A session ends this long after its last request (docs/dashboard.md#sessions)… */
export const SESSION_IDLE_MS = sql.SESSION_IDLE_HOURS * 60 * 60 * 1000;
/** …as `last_seen_at` records it, moved at most this often (sql.TOUCH_SESSION). */
export const SESSION_TOUCH_MS = 60 * 1000;
/** …and at the latest this long after sign-in. */
export const SESSION_MAX_MS = 7 * 24 * 60 * 60 * 1000;
/** The cookie that carries the session token. */
export const SESSION_COOKIE = 'sibyl_session';

export interface Session {
  id: string;
  wallet: WalletAccounts;
  createdAt: Date;
  /** When the session ends unless used again before. */
  idleExpiresAt: Date;
  /** When the session ends however much it is used. */
  expiresAt: Date;
}

interface SessionRow {
  id: string;
  wallet_address: string;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
}

/** Only this hash of a token is stored: a leaked table opens no session. */
function tokenHash(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/** A token is 43 base64url characters (32 random bytes); anything else is no session's. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** Starts a session for the wallet in the caller's transaction (the one that spends the nonce). */
export async function startSession(
  ctx: TxContext,
  wallet: WalletAccounts,
): Promise<{ token: string; session: Session }> {
  const now = ctx.clock.now();
  const token = randomBytes(32).toString('base64url');
  const id = `ses_${randomBase62(22)}`;
  const expiresAt = new Date(now.getTime() + SESSION_MAX_MS);
  await ctx.tx.query(sql.INSERT_SESSION, [id, tokenHash(token), wallet.address, now, expiresAt]);
  return {
    token,
    session: { id, wallet, createdAt: now, idleExpiresAt: idleEnd(now, expiresAt), expiresAt },
  };
}

/** The live session a token opens, kept alive by this use; null when unknown, ended or expired. */
export async function resumeSession(ctx: Context, token: string | undefined): Promise<Session | null> {
  if (token === undefined || !TOKEN_PATTERN.test(token)) return null;
  const now = ctx.clock.now();
  const [row] = await queryable(ctx).query<SessionRow>(sql.TOUCH_SESSION, [
    tokenHash(token),
    now,
    new Date(now.getTime() - SESSION_IDLE_MS),
    new Date(now.getTime() - SESSION_TOUCH_MS),
  ]);
  if (!row) return null;
  // A session is started for a wallet that signed in, and that wallet's row is never deleted.
  const wallet = await signInWallet(ctx, row.wallet_address);
  if (!wallet) return null;
  return {
    id: row.id,
    wallet,
    createdAt: row.created_at,
    idleExpiresAt: idleEnd(row.last_seen_at, row.expires_at),
    expiresAt: row.expires_at,
  };
}

/** Ends the session everywhere: its row is deleted, and every instance reads rows. */
export async function endSession(ctx: Context, token: string | undefined): Promise<void> {
  if (token === undefined || !TOKEN_PATTERN.test(token)) return;
  await queryable(ctx).query(sql.DELETE_SESSION, [tokenHash(token)]);
}

function idleEnd(lastSeen: Date, expiresAt: Date): Date {
  return new Date(Math.min(lastSeen.getTime() + SESSION_IDLE_MS, expiresAt.getTime()));
}
