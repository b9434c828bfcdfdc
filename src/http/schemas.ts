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

export const ErrorBodyProperties = {
  error: Type.String({ description: 'Human-readable message' }),
  code: Type.String({ description: 'Machine-readable code from the error vocabulary (docs/api.md)' }),
  details: Type.Optional(
    Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          'Structured context; VALIDATION_ERROR lists each problem in `problems` ({ path, message })',
      },
    ),
  ),
  requestId: Type.String(),
  symbol: Type.Optional(Type.String({ description: 'SYMBOL_NOT_FOUND: the symbol asked for' })),
  maxSymbols: Type.Optional(Type.Integer({ description: 'BATCH_LIMIT_EXCEEDED: the limit' })),
} satisfies TProperties;

export function errorBodySchema(description: string): TObject {
  return Type.Object(ErrorBodyProperties, { description });
}

export const BillingProperties = {
  costUsd: UsdString,
  remainingBalanceUsd: UsdString,
} satisfies TProperties;
