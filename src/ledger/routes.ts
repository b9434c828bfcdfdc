import type { FastifyInstance } from 'fastify';
import { defineAccountRoute } from '../http/account-route.js';
import { listTransactions } from './history.js';
import { TransactionList, TransactionQuery, UsageQuery, UsageReport } from './schemas.js';
import { accountUsage, type KeyNames } from './usage.js';

/** The account's money, entry by entry (docs/api.md#transactions); `keyNames` names the keys of a usage report. */
export function ledgerRoutes(app: FastifyInstance, deps: { keyNames: KeyNames }): void {
  defineAccountRoute(app, {
    method: 'GET',
    url: '/account/transactions',
    operationId: 'listTransactions',
    responseName: 'TransactionList',
    summary: 'The account’s ledger entries, newest first: where the balance went',
    tags: ['account'],
    permission: 'account',
    querystring: TransactionQuery,
    response: TransactionList,
    handler: async ({ query, caller, ctx }) => listTransactions(ctx, caller.accountId, query),
  });

  defineAccountRoute(app, {
    method: 'GET',
    url: '/account/usage',
    operationId: 'getAccountUsage',
    responseName: 'AccountUsage',
    summary: 'Spend and billed requests per day, per operation or per key, over a range',
    description:
      'Computed from the ledger: `requests` counts the paid requests (charges), `spendUsd` is what they cost ' +
      'less the refunds given back (a refund counts on its own day, against the operation and key of its ' +
      'charge). `from` and `to` are ISO 8601 timestamps or UTC dates (`2026-11-01`); `to` is exclusive; ' +
      'at most 366 days; by default the last 30 days including today. The dashboard draws the same figures.',
    tags: ['account'],
    permission: 'account',
    querystring: UsageQuery,
    response: UsageReport,
    handler: async ({ query, caller, ctx }) => accountUsage(ctx, deps.keyNames, caller.accountId, query),
  });
}
