import { type AccountWallet, linkWallet } from '../accounts/index.js';
import { type Context, withTransaction } from '../context.js';
import { validationError } from '../errors.js';
import { checkSignedMessage, type SignInOutput, spendNonce, storeChallenge } from './sign-in.js';
import {
  linkStatement,
  makeSignInInput,
  requireAddress,
  type SignInInput,
  type SignInPlace,
} from './siws.js';

/**
 * Linking another wallet to the signed-in account (docs/dashboard.md#your-wallets,
 * docs/deposits.md#which-wallets-count):
 * the wallet proves it is held by whoever asks by signing a SIWS input made for that purpose and
 * that account, checked exactly as a sign-in is; the accounts room keeps the one-owner rule.
 */

/** `POST /dashboard/api/{mode}/wallets/challenge`: a link input for `address`, stored for this account. */
export async function createLinkChallenge(
  ctx: Context,
  place: SignInPlace,
  request: { account: { id: string; mode: string }; address: string },
): Promise<SignInInput> {
  if (request.account.mode !== 'live') throw liveOnly();
  requireAddress(request.address, 'body.address');
  const { id } = request.account;
  const input = makeSignInInput(place, ctx.clock.now(), request.address, linkStatement(id));
  return storeChallenge(ctx, input, { kind: 'link', accountId: id });
}

/** Sandbox accounts are never funded from the chain: no wallet of theirs counts. */
export function liveOnly() {
  return validationError(
    [{ path: 'path.mode', message: 'wallets are linked to the live account', allowed: ['live'] }],
    'Wallets are linked to the live account: sandbox accounts are never funded from the chain',
  );
}

/**
 * `POST /dashboard/api/{mode}/wallets`: the signed link input checked, then, in one transaction,
 * its nonce spent and the wallet linked (or found already the account's).
 */
export async function verifyLink(
  ctx: Context,
  place: SignInPlace,
  request: { accountId: string; output: SignInOutput },
): Promise<{ wallet: AccountWallet; linked: boolean }> {
  const { accountId, output } = request;
  const input = await checkSignedMessage(ctx, place, { kind: 'link', accountId }, output);
  return withTransaction(ctx, async (tx) => {
    await spendNonce(tx, input.nonce);
    return linkWallet(tx, { accountId, address: output.address });
  });
}
