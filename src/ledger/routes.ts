import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { defineRoute } from '../http/route.js';
import { Timestamp, UsdString } from '../http/schemas.js';
import { listTransactions } from './history.js';

const Kind = Type.Union(
  [Type.Literal('deposit'), Type.Literal('charge'), Type.Literal('refund'), Type.Literal('adjustment')],
  { description: 'deposit (a credit), charge (a paid request), refund (a charge given back), adjustment' },
);

const Transaction = Type.Object(
  {
    id: Type.String({
      description: 'The entry id; pass it as `startingAfter` for the next page',
      examples: ['48213'],
    }),
    kind: Kind,
    amountUsd: Type.String({
      description: 'Signed: what the entry did to the balance',
      examples: ['-0.005'],
    }),
    balanceAfterUsd: UsdString,
    operation: Type.Union([Type.String(), Type.Null()], {
      description: 'Charges: what was sold (operationId)',
    }),
    requestId: Type.Union([Type.String(), Type.Null()], { description: 'Charges: the request that paid' }),
    keyId: Type.Union([Type.String(), Type.Null()], {
      description: 'Charges: the key that made the request',
    }),
    reference: Type.Union([Type.String(), Type.Null()], { description: 'Deposits: the external reference' }),
    refundOf: Type.Union([Type.String(), Type.Null()], { description: 'Refunds: the charge given back' }),
    memo: Type.Union([Type.String(), Type.Null()]),
    createdAt: Timestamp,
  },
  { title: 'Transaction', additionalProperties: false },
);

const TransactionList = Type.Object(
  {
    transactions: Type.Array(Transaction, { description: 'Newest first' }),
    hasMore: Type.Boolean(),
    nextStartingAfter: Type.Union([Type.String(), Type.Null()], {
      description: 'The `startingAfter` of the next page; null on the last one',
    }),
  },
  { additionalProperties: false },
);

const TransactionQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    startingAfter: Type.Optional(
      Type.String({ maxLength: 20, description: 'Entries older than this entry id' }),
    ),
    kind: Type.Optional(Kind),
    from: Type.Optional(
      Type.String({ maxLength: 40, description: 'ISO 8601: entries at or after this time' }),
    ),
    to: Type.Optional(
      Type.String({ maxLength: 40, description: 'ISO 8601: entries at or before this time' }),
    ),
  },
  { additionalProperties: false },
);

/** The account's money, entry by entry (docs/api.md#transactions). */
export function ledgerRoutes(app: FastifyInstance): void {
  defineRoute(app, {
    method: 'GET',
    url: '/account/transactions',
    operationId: 'listTransactions',
    responseName: 'TransactionList',
    summary: 'The account’s ledger entries, newest first: where the balance went',
    tags: ['account'],
    permission: 'account',
    querystring: TransactionQuery,
    response: TransactionList,
    handler: async ({ query, principal, ctx }) => listTransactions(ctx, principal.accountId, query),
  });
}
