import Type from 'typebox';
import { handlerRules, Timestamp, timestampOrDateRules, timestampRules, UsdString } from '../http/schemas.js';

/** The ledger on the wire: its entries (GET /account/transactions) and the usage computed from them. */

export const EntryKind = Type.Union(
  [Type.Literal('deposit'), Type.Literal('charge'), Type.Literal('refund'), Type.Literal('adjustment')],
  { description: 'deposit (a credit), charge (a paid request), refund (a charge given back), adjustment' },
);

export const Transaction = Type.Object(
  {
    id: Type.String({
      description: 'The entry id; pass it as `startingAfter` for the next page',
      examples: ['48213'],
    }),
    kind: EntryKind,
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
    chain: Type.Union(
      [
        Type.Object(
          {
            token: Type.Union([Type.Literal('SOL'), Type.Literal('USDC')]),
            amount: Type.String({ description: 'In the token’s units', examples: ['0.25'] }),
            rateUsd: Type.Union([Type.String(), Type.Null()], {
              description: 'USD per token the deposit was valued at',
              examples: ['142.12'],
            }),
            slot: Type.Integer({ description: 'The Solana slot of the transaction' }),
            signature: Type.Union([Type.String(), Type.Null()]),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'Deposits credited from the chain: what arrived, at what rate, where; else null' },
    ),
  },
  { title: 'Transaction', additionalProperties: false },
);

export const TransactionList = Type.Object(
  {
    transactions: Type.Array(Transaction, { description: 'Newest first' }),
    hasMore: Type.Boolean(),
    nextStartingAfter: Type.Union([Type.String(), Type.Null()], {
      description: 'The `startingAfter` of the next page; null on the last one',
    }),
  },
  { additionalProperties: false },
);

export const TransactionQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    startingAfter: Type.Optional(
      Type.String({
        maxLength: 20,
        description: 'Entries older than this entry id (a `nextStartingAfter`)',
        ...handlerRules({ pattern: '^\\d{1,18}$' }),
      }),
    ),
    kind: Type.Optional(EntryKind),
    from: Type.Optional(
      Type.String({
        maxLength: 40,
        description: 'ISO 8601: entries at or after this time; not after `to`',
        ...timestampRules(),
      }),
    ),
    to: Type.Optional(
      Type.String({
        maxLength: 40,
        description: 'ISO 8601: entries at or before this time',
        ...timestampRules(),
      }),
    ),
  },
  { additionalProperties: false },
);

const UsageFigures = {
  requests: Type.Integer({ description: 'Paid requests (charges)' }),
  chargedUsd: UsdString,
  refundedUsd: UsdString,
  spendUsd: Type.String({
    pattern: '^-?\\d+\\.\\d{2,6}$',
    description: 'chargedUsd − refundedUsd (negative on a day that gave back more than it charged)',
    examples: ['0.25'],
  }),
};

export const UsageReport = Type.Object(
  {
    from: Timestamp,
    to: Type.String({ description: 'ISO 8601 timestamp (UTC), exclusive' }),
    groupBy: Type.Union([Type.Literal('day'), Type.Literal('operation'), Type.Literal('key')]),
    totals: Type.Object(UsageFigures, { additionalProperties: false }),
    rows: Type.Array(
      Type.Object(
        {
          group: Type.String({
            description: 'The UTC day (YYYY-MM-DD), the operation (operationId) or the key id',
          }),
          label: Type.Union([Type.String(), Type.Null()], { description: 'By key: the key’s name' }),
          ...UsageFigures,
        },
        { additionalProperties: false },
      ),
      {
        description:
          'By day: every day of the range, oldest first, days without activity included; otherwise the ' +
          'groups with activity, the largest spend first',
      },
    ),
  },
  { additionalProperties: false },
);

export const UsageQuery = Type.Object(
  {
    from: Type.Optional(
      Type.String({
        maxLength: 40,
        description:
          'ISO 8601 timestamp or UTC date: from this time on; before `to`, at most 366 days before it',
        ...timestampOrDateRules(),
      }),
    ),
    to: Type.Optional(
      Type.String({
        maxLength: 40,
        description: 'ISO 8601 timestamp or UTC date: before this time',
        ...timestampOrDateRules(),
      }),
    ),
    groupBy: Type.Optional(
      Type.Union([Type.Literal('day'), Type.Literal('operation'), Type.Literal('key')], { default: 'day' }),
    ),
  },
  { additionalProperties: false },
);
