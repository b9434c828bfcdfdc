import { type WalletAccounts, walletAccounts } from '../accounts/index.js';
import { type Context, queryable, type TxContext, withTransaction } from '../context.js';
import { AppError } from '../errors.js';
import type { SecretBox } from '../webhooks/index.js';
import { type Session, startSession } from './sessions.js';
import {
  makeSignInInput,
  readSignedMessage,
  requireAddress,
  type SignInInput,
  type SignInPlace,
  signInMessageText,
  verifyWalletSignature,
} from './siws.js';
import * as sql from './sql.js';

/** Why a sign-in was refused: `details.reason` of SIGN_IN_REJECTED (docs/dashboard.md#sign-in-with-solana). */
export type RejectionReason = 'signature' | 'message' | 'nonce_unknown' | 'nonce_used' | 'expired' | 'domain';

function rejected(reason: RejectionReason, message: string): AppError {
  return new AppError('SIGN_IN_REJECTED', `Sign-in rejected: ${message}`, { details: { reason } });
}

/** What a challenge is for: signing in, or linking another wallet to an account (migration 0025). */
export type ChallengePurpose = { kind: 'sign-in' } | { kind: 'link'; accountId: string };

/** Stores a SIWS input made for `purpose`; the verification finds it by its nonce. */
export async function storeChallenge(
  ctx: Context,
  input: SignInInput,
  purpose: ChallengePurpose,
): Promise<SignInInput> {
  await queryable(ctx).query(sql.INSERT_CHALLENGE, [
    input.nonce,
    JSON.stringify(input),
    new Date(input.issuedAt),
    new Date(input.expirationTime),
    purpose.kind,
    purpose.kind === 'link' ? purpose.accountId : null,
  ]);
  return input;
}

/** `POST /dashboard/api/auth/challenge`: a sign-in input, stored until it is used or expires. */
export async function createChallenge(
  ctx: Context,
  place: SignInPlace,
  request: { address?: string | undefined },
): Promise<SignInInput> {
  if (request.address !== undefined) requireAddress(request.address, 'body.address');
  return storeChallenge(ctx, makeSignInInput(place, ctx.clock.now(), request.address), { kind: 'sign-in' });
}

/** What a wallet answered: the signer's address, the bytes it signed, and its signature. */
export interface SignInOutput {
  address: string;
  signedMessage: Uint8Array;
  signature: Uint8Array;
}

interface ChallengeRow {
  nonce: string;
  input: SignInInput;
  expires_at: Date;
  used_at: Date | null;
  purpose: 'sign-in' | 'link';
  account_id: string | null;
}

/**
 * Checks a wallet's answer to a stored challenge of `purpose`. The signed message names its nonce;
 * everything else is checked against the input stored for that nonce, never one the client sends
 * back: the nonce known, issued for this purpose (and, for a link, this account), unused, the
 * input unexpired, its domain and URI this server's, the message exactly the SIWS text of that
 * input for that address, and the signature that address's. The caller spends the nonce
 * (USE_CHALLENGE) in the transaction that acts on it.
 */
export async function checkSignedMessage(
  ctx: Context,
  place: SignInPlace,
  purpose: ChallengePurpose,
  output: SignInOutput,
): Promise<SignInInput> {
  const claimed = readSignedMessage(output.signedMessage);
  if (!claimed) throw rejected('message', 'the signed message is not a Sign-In With Solana message');
  if (claimed.nonce === undefined) throw rejected('nonce_unknown', 'the signed message names no nonce');
  const [challenge] = await queryable(ctx).query<ChallengeRow>(sql.FIND_CHALLENGE, [claimed.nonce]);
  if (!challenge) throw rejected('nonce_unknown', 'this nonce was not issued by this server');
  if (challenge.purpose !== purpose.kind) {
    throw rejected(
      'nonce_unknown',
      challenge.purpose === 'link'
        ? 'this nonce was issued to link a wallet, not to sign in'
        : 'this nonce was issued to sign in, not to link a wallet',
    );
  }
  if (purpose.kind === 'link' && challenge.account_id !== purpose.accountId) {
    throw rejected('nonce_unknown', 'this nonce was issued to link a wallet to another account');
  }
  if (challenge.used_at) throw rejected('nonce_used', 'this nonce was already used');
  const now = ctx.clock.now();
  if (now.getTime() > challenge.expires_at.getTime()) {
    throw rejected('expired', 'the input expired; ask for a new one');
  }
  const input = challenge.input;
  if (
    claimed.domain !== input.domain ||
    claimed.uri !== input.uri ||
    input.domain !== place.domain ||
    input.uri !== place.uri
  ) {
    throw rejected('domain', `the message is not for ${place.domain}`);
  }
  if (input.address !== undefined && input.address !== output.address) {
    throw rejected('message', 'the input was issued for another address');
  }
  const expected = new TextEncoder().encode(signInMessageText(input, output.address));
  if (!Buffer.from(expected).equals(Buffer.from(output.signedMessage))) {
    throw rejected('message', 'the signed message is not the text of the input issued');
  }
  if (!verifyWalletSignature(output.address, output.signedMessage, output.signature)) {
    throw rejected('signature', 'the signature is not the wallet’s');
  }
  return input;
}

/** Spends the nonce inside the caller's transaction: of two uses of one signed message, one passes. */
export async function spendNonce(ctx: TxContext, nonce: string): Promise<void> {
  const [spent] = await ctx.tx.query(sql.USE_CHALLENGE, [nonce, ctx.clock.now()]);
  if (!spent) throw rejected('nonce_used', 'this nonce was already used');
}

/**
 * `POST /dashboard/api/auth/verify`: the answer checked (checkSignedMessage), then, in one
 * transaction, the nonce is spent, the wallet's accounts are found or made, and a session begins.
 */
export async function verifySignIn(
  ctx: Context,
  deps: { place: SignInPlace; secrets: SecretBox },
  output: SignInOutput,
): Promise<{ wallet: WalletAccounts; created: boolean; token: string; session: Session }> {
  const input = await checkSignedMessage(ctx, deps.place, { kind: 'sign-in' }, output);
  return withTransaction(ctx, async (tx) => {
    await spendNonce(tx, input.nonce);
    const { wallet, created } = await walletAccounts(tx, deps.secrets, output.address);
    const { token, session } = await startSession(tx, wallet);
    return { wallet, created, token, session };
  });
}
