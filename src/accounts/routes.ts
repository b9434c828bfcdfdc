import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { FEES } from '../fees.js';
import { defineRoute } from '../http/route.js';
import { NullableTimestamp, Timestamp, UsdString } from '../http/schemas.js';
import { MAX_ACTIVE_KEYS } from '../keys/keys.js';
import { PermissionName } from '../keys/schemas.js';
import { formatUsd } from '../lib/money.js';
import type { SecretBox } from '../webhooks/secret-box.js';
import { getAccount } from './accounts.js';

const Pricing = Type.Object(
  Object.fromEntries(Object.keys(FEES).map((name) => [name, UsdString])) as Record<
    keyof typeof FEES,
    typeof UsdString
  >,
  { description: 'What each operation costs, in USD' },
);

const AccountResponse = Type.Object({
  id: Type.String(),
  mode: Type.Union([Type.Literal('live'), Type.Literal('sandbox')], {
    description: 'sandbox accounts use simulated providers and play money',
  }),
  status: Type.Union([Type.Literal('active'), Type.Literal('suspended')]),
  walletAddress: Type.Union([Type.String(), Type.Null()], { description: 'Connected Solana wallet' }),
  balanceUsd: UsdString,
  currency: Type.Literal('USD'),
  webhookSecret: Type.String({
    description: 'Secret (whsec_…) that signs this account’s webhook callbacks; keep it server-side',
  }),
  createdAt: Timestamp,
  apiKey: Type.Object(
    {
      id: Type.String(),
      permissions: Type.Array(PermissionName),
      expiresAt: NullableTimestamp,
    },
    { description: 'The key that made this request' },
  ),
  pricing: Pricing,
  limits: Type.Object({
    maxActiveKeys: Type.Integer(),
  }),
});

export function accountRoutes(app: FastifyInstance, deps: { secrets: SecretBox }): void {
  defineRoute(app, {
    method: 'GET',
    url: '/account',
    operationId: 'getAccount',
    responseName: 'Account',
    summary: 'The account of the calling key: balance, mode, status, pricing',
    tags: ['account'],
    permission: 'account',
    response: AccountResponse,
    handler: async ({ principal, ctx }) => {
      const account = await getAccount(ctx.db, principal.accountId);
      return {
        id: account.id,
        mode: account.mode,
        status: account.status,
        walletAddress: account.walletAddress,
        balanceUsd: formatUsd(account.balanceMicros),
        currency: 'USD' as const,
        webhookSecret: deps.secrets.open(account.storedWebhookSecret, account.id),
        createdAt: account.createdAt.toISOString(),
        apiKey: {
          id: principal.keyId,
          permissions: [...principal.permissions],
          expiresAt: principal.expiresAt?.toISOString() ?? null,
        },
        pricing: Object.fromEntries(Object.entries(FEES).map(([k, v]) => [k, formatUsd(v)])) as Record<
          keyof typeof FEES,
          string
        >,
        limits: { maxActiveKeys: MAX_ACTIVE_KEYS },
      };
    },
  });
}
