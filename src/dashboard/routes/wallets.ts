import Type from 'typebox';
import { linkedWallets, MAX_LINKED_WALLETS, unlinkWallet } from '../../accounts/index.js';
import { createLinkChallenge, liveOnly, verifyLink } from '../link.js';
import { requireAddress } from '../siws.js';
import { Address, SignInInput, VerifyBody } from './auth.js';
import { type DashboardEdge, defineDashboardRoute } from './define.js';

const Wallet = Type.Object({
  address: Address,
  kind: Type.Union([Type.Literal('sign-in'), Type.Literal('linked')], {
    description: '`sign-in`: the wallet the account signs in with; `linked`: one linked by signing with it',
  }),
  linkedAt: Type.Union([Type.String(), Type.Null()], { description: 'Null for the sign-in wallet' }),
});

/** Linking is for the live account: a sandbox account is never funded from the chain. */
const LIVE_ONLY = {
  mode: 'live',
  reason: 'wallets are linked to the live account; sandbox accounts are never funded from the chain',
} as const;

/**
 * The account's wallets (docs/dashboard.md#your-wallets): deposits are recognised by the wallet
 * that sends them, so another wallet is linked by signing a SIWS input with it.
 */
export function walletRoutes(edge: DashboardEdge): void {
  defineDashboardRoute(edge, {
    scope: 'account',
    method: 'GET',
    url: '/wallets',
    operationId: 'listWallets',
    summary: 'The wallets whose deposits are credited to the account: its sign-in wallet and linked ones',
    description: 'Sandbox accounts are never funded from the chain: their list is empty.',
    response: Type.Object({
      wallets: Type.Array(Wallet),
      maxLinked: Type.Integer({ description: 'How many wallets an account may link' }),
    }),
    handler: async ({ ctx, account }) => ({
      wallets: account.mode === 'live' ? await linkedWallets(ctx, account.id) : [],
      maxLinked: MAX_LINKED_WALLETS,
    }),
  });

  defineDashboardRoute(edge, {
    scope: 'account',
    method: 'POST',
    url: '/wallets/challenge',
    operationId: 'linkWalletChallenge',
    summary: 'A SIWS input for the wallet to link to sign (single use, valid 5 minutes, for this account)',
    signIn: true,
    onlyMode: LIVE_ONLY,
    body: Type.Object({ address: Address }, { additionalProperties: false }),
    response: Type.Object({ input: SignInInput }),
    handler: async ({ ctx, account, body }) => ({
      input: await createLinkChallenge(ctx, edge.place(), { account, address: body.address }),
    }),
  });

  defineDashboardRoute(edge, {
    scope: 'account',
    method: 'POST',
    url: '/wallets',
    operationId: 'linkWallet',
    summary: 'Links the wallet that signed the link input to the live account',
    onlyMode: LIVE_ONLY,
    description:
      'Checked as a sign-in is; refusals are 401 SIGN_IN_REJECTED with `details.reason` (an input made to ' +
      'sign in, or for another account, is `nonce_unknown`). A wallet that signs in to another account or ' +
      'is linked to one: 409 WALLET_IN_USE; more than `maxLinked` links: 409 MAX_WALLETS_EXCEEDED. The ' +
      'account’s own sign-in wallet, or a wallet it already linked, answers 200 with `linked: false`.',
    signIn: true,
    body: VerifyBody,
    response: Type.Object({
      wallet: Wallet,
      linked: Type.Boolean({ description: 'False when the wallet already was the account’s' }),
    }),
    errors: ['SIGN_IN_REJECTED', 'WALLET_IN_USE', 'MAX_WALLETS_EXCEEDED'],
    handler: async ({ ctx, account, body }) => {
      if (account.mode !== 'live') throw liveOnly();
      const { output } = body;
      requireAddress(output.account.address, 'body.output.account.address');
      return verifyLink(ctx, edge.place(), {
        accountId: account.id,
        output: {
          address: output.account.address,
          signedMessage: Buffer.from(output.signedMessage, 'base64'),
          signature: Buffer.from(output.signature, 'base64'),
        },
      });
    },
  });

  defineDashboardRoute(edge, {
    scope: 'account',
    method: 'DELETE',
    url: '/wallets/:address',
    operationId: 'unlinkWallet',
    summary: 'Unlinks a linked wallet: its later deposits are no longer recognised as the account’s',
    params: Type.Object({ address: Address }),
    response: Type.Object({ unlinked: Type.Literal(true) }),
    errors: ['NOT_FOUND'],
    handler: async ({ ctx, account, params }) => {
      requireAddress(params.address, 'path.address');
      await unlinkWallet(ctx, { accountId: account.id, address: params.address });
      return { unlinked: true as const };
    },
  });
}
