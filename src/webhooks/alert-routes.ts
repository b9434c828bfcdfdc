import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { defineAccountRoute } from '../http/account-route.js';
import { getAlertSettings, MAX_LOW_BALANCE_THRESHOLDS, setAlertSettings } from '../ledger/index.js';

/**
 * The account's balance alerts (docs/webhooks.md#balance-alerts): the thresholds the ledger's money
 * movements check, whose crossings become `balance.low` events. Declared with the webhooks, whose
 * page manages them in the dashboard; the settings are the ledger's.
 */
export function alertRoutes(app: FastifyInstance): void {
  defineAccountRoute(app, {
    method: 'GET',
    url: '/account/alerts',
    operationId: 'getAccountAlerts',
    responseName: 'AccountAlerts',
    summary: 'The account’s balance alerts: its low-balance thresholds',
    description: ALERTS_NOTE,
    tags: ['account'],
    permission: 'account',
    response: AccountAlerts,
    handler: async ({ caller, ctx }) => getAlertSettings(ctx, caller.accountId),
  });

  defineAccountRoute(app, {
    method: 'PUT',
    url: '/account/alerts',
    operationId: 'setAccountAlerts',
    responseName: 'AccountAlerts',
    summary: 'Set the account’s low-balance thresholds',
    description:
      `${ALERTS_NOTE} At most ${MAX_LOW_BALANCE_THRESHOLDS} distinct amounts above 0.00; \`[]\` turns the ` +
      'low-balance alerts off. A threshold above the balance fires once the balance has been at or above it ' +
      'and falls below it again.',
    tags: ['account'],
    permission: 'account',
    body: AccountAlerts,
    response: AccountAlerts,
    handler: async ({ body, caller, ctx }) => setAlertSettings(ctx, caller.accountId, body),
  });
}

const ALERTS_NOTE =
  '`balance.low` is recorded once when a change takes the balance from at or above a threshold to below it ' +
  '(a charge, a refund, an adjustment), and again only after the balance was back at or above it; ' +
  '`balance.depleted` once when a paid request is first refused with 402, again after a credit ' +
  '(docs/webhooks.md#balance-alerts). A live account starts with `["5.00"]`, a sandbox one with none. Free.';

const AccountAlerts = Type.Object(
  {
    lowBalanceUsd: Type.Array(
      Type.String({
        pattern: '^\\d+\\.\\d{2,6}$',
        description: 'A threshold: USD amount as a decimal string with 2 to 6 fraction digits',
        examples: ['5.00'],
      }),
      {
        maxItems: MAX_LOW_BALANCE_THRESHOLDS,
        uniqueItems: true,
        description: 'Low-balance thresholds, highest first: at most 3, distinct, each above 0.00',
        examples: [['5.00', '1.00']],
      },
    ),
  },
  { additionalProperties: false },
);
