import Type, { type TObject, type TProperties } from 'typebox';

/** Money on the wire (docs/api.md#money): a decimal string with 2 to 6 fraction digits. */
export const UsdString = Type.String({
  pattern: '^-?\\d+\\.\\d{2,6}$',
  description: 'USD amount as a decimal string with 2 to 6 fraction digits, e.g. "0.01"',
  examples: ['0.01'],
});

export const Timestamp = Type.String({
  description: 'ISO 8601 timestamp (UTC)',
  examples: ['2026-11-21T12:00:00.000Z'],
});

export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

/** One problem of a request that failed validation (docs/api.md#errors). */
export const ValidationProblemSchema = Type.Object(
  {
    path: Type.String({
      description: 'Where: `body.…`, `query.…`, `path.…` or `header.…`',
      examples: ['body.symbols[2]'],
    }),
    message: Type.String({ examples: ['is not a known symbol or mint'] }),
    allowed: Type.Optional(
      Type.Array(Type.String(), { description: 'For an enumeration: every value the field accepts' }),
    ),
  },
  {
    title: 'ValidationProblem',
    additionalProperties: true,
    examples: [
      {
        path: 'query.status',
        message: 'must be one of: OPEN, CLOSED, RESOLVING, FINALIZED, CANCELLED',
        allowed: ['OPEN', 'CLOSED', 'RESOLVING', 'FINALIZED', 'CANCELLED'],
      },
    ],
  },
);

const CODE_DESCRIPTION = 'Machine-readable code from the error vocabulary (docs/api.md)';

export const ErrorBodyProperties = {
  error: Type.String({ description: 'Human-readable message' }),
  code: Type.String({ description: CODE_DESCRIPTION }),
  requestId: Type.String({
    description: 'The id of this request (also in X-Request-Id)',
    examples: ['req_4fKq8ZtV1xYwJ2mN7pRb3c'],
  }),
  details: Type.Optional(
    Type.Object(
      { problems: Type.Optional(Type.Array(ValidationProblemSchema)) },
      {
        additionalProperties: true,
        description:
          'Structured context; VALIDATION_ERROR lists every problem in `problems`, INSUFFICIENT_BALANCE ' +
          'gives `costUsd` and `balanceUsd`, QUOTA_EXCEEDED the period and its reset',
      },
    ),
  ),
  symbol: Type.Optional(Type.String({ description: 'SYMBOL_NOT_FOUND: the symbol asked for' })),
  maxSymbols: Type.Optional(Type.Integer({ description: 'BATCH_LIMIT_EXCEEDED: the limit' })),
} satisfies TProperties;

/** The error body of one status: `code` is one of the codes that status carries on that route. */
export function errorBodySchema(codes: readonly string[]): TObject {
  return Type.Object(
    { ...ErrorBodyProperties, code: Type.Enum([...codes], { description: CODE_DESCRIPTION }) },
    { description: `Error: ${codes.join(', ')}` },
  );
}

export const BillingProperties = {
  costUsd: UsdString,
  remainingBalanceUsd: UsdString,
} satisfies TProperties;
