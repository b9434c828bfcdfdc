import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { defineRoute } from '../http/route.js';
import { NullableTimestamp } from '../http/schemas.js';
import { PermissionName } from '../keys/index.js';
import { type SecretBox, webhookSecretOf } from '../webhooks/index.js';
import { getAccount } from './accounts.js';
import { accountFields, type PricingSettings, presentAccount } from './schemas.js';

const { createdAt, pricing, limits, ...identity } = accountFields;

// Field order as before the dashboard shared the presenter: the answer's bytes are unchanged.
const AccountResponse = Type.Object({
  ...identity,
  webhookSecret: Type.Optional(
    Type.String({
      description:
        'Secret (whsec_…) that signs this account’s webhook callbacks; keep it server-side. Present only ' +
        'when the calling key has the `keys` permission (it can forge callbacks): read it with ' +
        '`GET /account/webhook-secret`',
    }),
  ),
  createdAt,
  apiKey: Type.Object(
    {
      id: Type.String(),
      permissions: Type.Array(PermissionName),
      expiresAt: NullableTimestamp,
    },
    { description: 'The key that made this request' },
  ),
  pricing,
  limits,
});

export function accountRoutes(
  app: FastifyInstance,
  deps: { secrets: SecretBox; settings: PricingSettings },
): void {
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
      const account = await getAccount(ctx, principal.accountId);
      return {
        ...presentAccount(account, deps.settings),
        // Whoever holds the secret can forge callbacks: only a key that may manage keys sees it.
        ...(principal.permissions.has('keys')
          ? { webhookSecret: await webhookSecretOf(ctx, deps.secrets, account.id) }
          : {}),
        apiKey: {
          id: principal.keyId,
          permissions: [...principal.permissions],
          expiresAt: principal.expiresAt?.toISOString() ?? null,
        },
      };
    },
  });
}
