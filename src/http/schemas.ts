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

/**
 * Where a schema carries rules its route's own code enforces, with that route's documented error
 * codes and messages (INVALID_SYMBOL for a malformed symbol, BATCH_LIMIT_EXCEEDED for a 51st symbol,
 * a VALIDATION_ERROR problem naming the field): the validator does not compile them, and the
 * OpenAPI document states them as plain JSON Schema keywords (openapi-document.ts), so that
 * generated clients and testers know every rule a request must meet. A string value `$NAME` is the
 * deployment's setting NAME, filled in when the document is made.
 */
export const HANDLER_RULES = 'x-handler-rules';

export function handlerRules(rules: Record<string, unknown>): Record<string, unknown> {
  return { [HANDLER_RULES]: rules };
}

/** The timestamps the service reads (src/lib/time.ts), as RFC 3339 states them: with seconds and a zone. */
export const ISO_TIMESTAMP_PATTERN =
  '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(?:\\.\\d{1,9})?(?:Z|[+-]\\d{2}:\\d{2})$';

/** A request timestamp: RFC 3339 `date-time`, upper-case `T` and `Z`, a zone always. */
export const timestampRules = (): Record<string, unknown> =>
  handlerRules({ format: 'date-time', pattern: ISO_TIMESTAMP_PATTERN });

/** A timestamp, or a UTC date (`2026-11-01`, its midnight). */
export const timestampOrDateRules = (): Record<string, unknown> =>
  handlerRules({
    anyOf: [
      { format: 'date-time', pattern: ISO_TIMESTAMP_PATTERN },
      { format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
    ],
  });

/** A token as the price routes read it (src/prices/tokens.ts): a symbol, or a base58 mint address. */
export const SYMBOL_OR_MINT_PATTERN = '^(?:[A-Za-z0-9]{1,15}|[1-9A-HJ-NP-Za-km-z]{32,44})$';

/** What the pattern cannot say of a mint address (src/lib/base58.ts `isSolanaAddress`). */
export const SYMBOL_OR_MINT_RULE =
  'A symbol (1 to 15 letters and digits) or a Solana mint address: base58 that decodes to exactly ' +
  '32 bytes. A base58 string of 32 to 44 characters that decodes to another length matches the ' +
  'pattern but is refused: 400 INVALID_SYMBOL.';

/**
 * Text stored as PostgreSQL `text`, which cannot hold NUL (U+0000): refused, 400 VALIDATION_ERROR.
 * The schema keyword that states it (with `handlerRules`) and the words for a description.
 */
export const NO_NUL = { not: { pattern: '\\u0000' } };
export const NO_NUL_WORDS = 'NUL characters (U+0000) are refused: 400 VALIDATION_ERROR.';

/**
 * What a callback URL's description says of its host (src/webhooks/addresses.ts `blockedHostReason`):
 * the rule depends on the deployment, so it is stated in words rather than as a schema keyword.
 */
export const CALLBACK_HOST_RULE =
  'Its host must be one a callback can reach: an IP address outside the public ranges, `localhost` ' +
  'and the special-use names `.invalid`, `.test`, `.example`, `.local` and `.localhost` (RFC 6761, ' +
  'RFC 6762) are refused at submit with 400 VALIDATION_ERROR, nothing charged ' +
  '(docs/webhooks.md#where-callbacks-may-go). A deployment that allows private targets (development) ' +
  'accepts them, except `.invalid`.';

/**
 * A callback URL the service accepts (src/webhooks/port.ts): an absolute https:// URI written as
 * RFC 3986 writes it — printable ASCII, no spaces or control characters, a host without user info.
 */
export const callbackUrlRules = (more: Record<string, unknown> = {}): Record<string, unknown> =>
  handlerRules({
    format: 'uri',
    pattern: "^https://[A-Za-z0-9._~!$&'()*+,;=%:\\[\\]-]+(?:[/?#][A-Za-z0-9._~:/?#\\[\\]@!$&'()*+,;=%-]*)?$",
    ...more,
  });
