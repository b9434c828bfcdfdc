import { stringifySetCookie } from 'cookie';
import type { FastifyReply } from 'fastify';
import Type from 'typebox';
import { accountFields, getAccount, presentAccount } from '../../accounts/index.js';
import { Timestamp, UsdString } from '../../http/schemas.js';
import { formatUsd } from '../../lib/money.js';
import type { SecretBox } from '../../webhooks/index.js';
import { endSession, SESSION_COOKIE, SESSION_MAX_MS } from '../sessions.js';
import { createChallenge, verifySignIn } from '../sign-in.js';
import { requireAddress } from '../siws.js';
import { type DashboardEdge, defineDashboardRoute, tokenOf } from './define.js';

export const Address = Type.String({
  minLength: 32,
  maxLength: 44,
  pattern: '^[1-9A-HJ-NP-Za-km-z]+$',
  description:
    'A Solana address: base58 that decodes to exactly 32 bytes (32 to 44 characters). A string of the ' +
    'pattern that decodes to another length is refused: 400 VALIDATION_ERROR naming the field.',
});
const Base64 = (description: string, pattern: string, maxLength: number) =>
  Type.String({ minLength: 4, maxLength, pattern, description });

export const SignInInput = Type.Object(
  {
    domain: Type.String(),
    uri: Type.String(),
    statement: Type.String(),
    version: Type.Literal('1'),
    chainId: Type.String(),
    nonce: Type.String({ description: 'Single use; at least 16 base58 characters' }),
    issuedAt: Timestamp,
    expirationTime: Timestamp,
    address: Type.Optional(Address),
  },
  { description: 'A `SolanaSignInInput` for `solana:signIn` (or the text `solana:signMessage` signs)' },
);

export const VerifyBody = Type.Object(
  {
    output: Type.Object(
      {
        account: Type.Object({ address: Address }, { additionalProperties: false }),
        signedMessage: Base64('The bytes the wallet signed, base64', '^[A-Za-z0-9+/]+={0,2}$', 8192),
        signature: Base64('The Ed25519 signature (64 bytes), base64', '^[A-Za-z0-9+/]{86}==$', 88),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

const AccountSummary = Type.Object({
  id: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('suspended')]),
  balanceUsd: UsdString,
});

/** Sign in, who is signed in, sign out (docs/dashboard.md#sign-in-with-solana). */
export function authRoutes(edge: DashboardEdge, deps: { secrets: SecretBox }): void {
  const secure = () => edge.origin().startsWith('https:');
  const setCookie = (reply: FastifyReply, value: string, maxAgeSeconds: number) =>
    reply.header(
      'set-cookie',
      stringifySetCookie(SESSION_COOKIE, value, {
        httpOnly: true,
        sameSite: 'strict',
        path: '/dashboard',
        secure: secure(),
        maxAge: maxAgeSeconds,
      }),
    );

  defineDashboardRoute(edge, {
    scope: 'public',
    method: 'POST',
    url: '/auth/challenge',
    operationId: 'signInChallenge',
    summary: 'A Sign-In With Solana input for the wallet to sign (single use, valid 5 minutes)',
    signIn: true,
    body: Type.Object(
      { address: Type.Optional(Address) },
      { additionalProperties: false, description: 'The wallet’s address, when the page knows it' },
    ),
    response: Type.Object({ input: SignInInput }),
    handler: async ({ ctx, body }) => ({ input: await createChallenge(ctx, edge.place(), body ?? {}) }),
  });

  defineDashboardRoute(edge, {
    scope: 'public',
    method: 'POST',
    url: '/auth/verify',
    operationId: 'signInVerify',
    summary: 'Checks the signed sign-in message and starts a session (the `sibyl_session` cookie)',
    description:
      'The first sign-in of a wallet creates its live account and a sandbox account with 100.00 USD of play ' +
      'money (`created: true`). Refusals are 401 SIGN_IN_REJECTED with `details.reason`: signature, message, ' +
      'nonce_unknown, nonce_used, expired or domain. A wallet another account linked does not sign in: ' +
      '409 WALLET_IN_USE.',
    signIn: true,
    body: VerifyBody,
    response: Type.Object({
      account: Type.Object(accountFields, { description: 'The wallet’s live account' }),
      created: Type.Boolean({ description: 'True when this sign-in created the wallet’s accounts' }),
    }),
    errors: ['SIGN_IN_REJECTED', 'WALLET_IN_USE'],
    handler: async ({ ctx, body }, _request, reply) => {
      const { output } = body;
      requireAddress(output.account.address, 'body.output.account.address');
      const signedIn = await verifySignIn(
        ctx,
        { place: edge.place(), secrets: deps.secrets },
        {
          address: output.account.address,
          signedMessage: Buffer.from(output.signedMessage, 'base64'),
          signature: Buffer.from(output.signature, 'base64'),
        },
      );
      setCookie(reply, signedIn.token, SESSION_MAX_MS / 1000);
      const live = await getAccount(ctx, signedIn.wallet.liveAccountId);
      return { account: presentAccount(live, edge.config), created: signedIn.created };
    },
  });

  defineDashboardRoute(edge, {
    scope: 'public',
    method: 'POST',
    url: '/auth/logout',
    operationId: 'signOut',
    summary: 'Ends the session on every instance and clears the cookie',
    response: Type.Object({ signedOut: Type.Literal(true) }),
    handler: async ({ ctx }, request, reply) => {
      await endSession(ctx, tokenOf(request));
      setCookie(reply, '', 0);
      return { signedOut: true as const };
    },
  });

  defineDashboardRoute(edge, {
    scope: 'session',
    method: 'GET',
    url: '/auth/session',
    operationId: 'getSession',
    summary: 'The signed-in wallet, its live and sandbox accounts, and when the session ends',
    response: Type.Object({
      wallet: Type.String(),
      accounts: Type.Object({ live: AccountSummary, sandbox: AccountSummary }),
      session: Type.Object({
        createdAt: Timestamp,
        idleExpiresAt: Type.String({
          description: 'Ends then unless used again (12 hours after the last use)',
        }),
        expiresAt: Type.String({ description: 'Ends then however much it is used (7 days after sign-in)' }),
      }),
    }),
    handler: async ({ ctx, session }) => {
      const summary = async (id: string) => {
        const account = await getAccount(ctx, id);
        return { id: account.id, status: account.status, balanceUsd: formatUsd(account.balanceMicros) };
      };
      const [live, sandbox] = await Promise.all([
        summary(session.wallet.liveAccountId),
        summary(session.wallet.sandboxAccountId),
      ]);
      return {
        wallet: session.wallet.address,
        accounts: { live, sandbox },
        session: {
          createdAt: session.createdAt.toISOString(),
          idleExpiresAt: session.idleExpiresAt.toISOString(),
          expiresAt: session.expiresAt.toISOString(),
        },
      };
    },
  });
}
