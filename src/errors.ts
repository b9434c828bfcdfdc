/**
 * The one closed error vocabulary of the service. Domain code throws `AppError` with a code from
 * this list; the HTTP edge maps the code to its status through `ERROR_STATUS` (the table in docs/api.md#errors).
 */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  INVALID_SYMBOL: 400,
  INVALID_TIMESTAMP: 400,
  TIMESTAMP_IN_PAST: 400,
  BATCH_LIMIT_EXCEEDED: 400,
  INVALID_API_KEY: 401,
  API_KEY_EXPIRED: 401,
  API_KEY_REVOKED: 401,
  ACCOUNT_NOT_FOUND: 401,
  // The dashboard (docs/dashboard.md): a sign-in that does not pass, a session that is gone.
  SIGN_IN_REJECTED: 401,
  SESSION_EXPIRED: 401,
  INSUFFICIENT_BALANCE: 402,
  PERMISSION_DENIED: 403,
  IP_NOT_ALLOWED: 403,
  ORIGIN_NOT_ALLOWED: 403,
  ACCOUNT_SUSPENDED: 403,
  NOT_FOUND: 404,
  SYMBOL_NOT_FOUND: 404,
  JOB_NOT_FOUND: 404,
  JOB_CANNOT_CANCEL: 409,
  DELIVERY_CANNOT_CANCEL: 409,
  KEY_ROTATION_IN_PROGRESS: 409,
  MAX_KEYS_EXCEEDED: 409,
  // An account registers at most 10 webhook endpoints (docs/webhooks.md#endpoints).
  MAX_ENDPOINTS_EXCEEDED: 409,
  IDEMPOTENCY_KEY_IN_USE: 409,
  // A wallet belongs to one account (docs/deposits.md#which-wallets-count).
  WALLET_IN_USE: 409,
  MAX_WALLETS_EXCEEDED: 409,
  REQUEST_TIMEOUT: 408,
  PAYLOAD_TOO_LARGE: 413,
  URI_TOO_LONG: 414,
  UNSUPPORTED_MEDIA_TYPE: 415,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMIT_EXCEEDED: 429,
  QUOTA_EXCEEDED: 429,
  // An event stream past one of its limits, named in `details.limit` (docs/api.md#event-streams).
  STREAM_LIMIT_EXCEEDED: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  PRICE_UNAVAILABLE: 503,
  AI_UNAVAILABLE: 503,
  // Attestations are off, or this instance's key was retired by a rotation: docs/attestations.md#rotation.
  ATTESTATION_UNAVAILABLE: 503,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * Codes that are never an HTTP answer: how durable work ended, shown on its record and in its
 * failure callback's `data.error.code` (docs/api.md#errors). `AI_RESOLUTION_FAILED`: fewer than 3
 * of the 4 models gave a valid answer (refunded); `CALLBACK_FAILED`: a webhook delivery's last
 * attempt failed.
 */
export const OUTCOME_CODES = ['AI_RESOLUTION_FAILED', 'CALLBACK_FAILED'] as const;
export type OutcomeCode = (typeof OUTCOME_CODES)[number];

/**
 * Codes that end an open event stream, never an HTTP status: sent as its last event, `event: error`
 * `{ error, code, requestId }` (docs/api.md#event-streams). `SLOW_CONSUMER`: the client read too
 * slowly (over 1 MiB unsent, or unsent data 30 s old); `SHUTTING_DOWN`: the instance is stopping,
 * reconnect. A stream may also end with an HTTP code (`INSUFFICIENT_BALANCE` when a minute cannot
 * be paid, `INTERNAL_ERROR`).
 */
export const STREAM_END_CODES = ['SLOW_CONSUMER', 'SHUTTING_DOWN'] as const;
export type StreamEndCode = (typeof STREAM_END_CODES)[number];

export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

/** Extra top-level fields some codes add to the error body (docs/api.md#errors). */
export interface ErrorExtras {
  symbol?: string;
  maxSymbols?: number;
}

export interface ValidationProblem {
  /** Where the problem is, e.g. `body.permissions[2]` or `query.interval`. */
  path: string;
  message: string;
  /** For a value outside an enumeration: every value the field accepts. */
  allowed?: string[];
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;
  readonly extras: ErrorExtras | undefined;
  /** Response headers that belong to this error (e.g. `Retry-After`). */
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: {
      details?: Record<string, unknown>;
      extras?: ErrorExtras;
      headers?: Record<string, string>;
    } = {},
  ) {
    // A domain error is an expected answer, not a bug: no stack is captured for it (a 50-symbol
    // batch with unknown mints made 40 of them, a sixth of its CPU; docs/performance.md).
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = stackTraceLimit;
    this.name = 'AppError';
    this.code = code;
    this.details = options.details;
    this.extras = options.extras;
    this.headers = options.headers;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export function validationError(problems: ValidationProblem[], message?: string): AppError {
  const summary = message ?? problems.map((p) => `${p.path}: ${p.message}`).join('; ');
  return new AppError('VALIDATION_ERROR', summary || 'Request validation failed', { details: { problems } });
}

export function notFound(what: string): AppError {
  return new AppError('NOT_FOUND', `${what} not found`);
}

/** At most `max` characters of client input, for error messages: never echo a whole input back. */
export function excerpt(text: string, max = 100): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
