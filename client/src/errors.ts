import type { ErrorCode } from './error-codes.js';

export type { ErrorCode };

/**
 * The one body of every error answer (docs/api.md#errors). The document gives each status of each
 * operation its own schema, whose `code` lists the codes that status can carry there.
 */
export interface ErrorBody {
  error: string;
  code: ErrorCode;
  requestId: string;
  details?: Record<string, unknown>;
  /** SYMBOL_NOT_FOUND: the symbol asked for. */
  symbol?: string;
  /** BATCH_LIMIT_EXCEEDED: the limit. */
  maxSymbols?: number;
}

/** An error answer of the API, with what support needs: its code, its status and its `requestId`. */
export class SibylApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly requestId: string | null;
  readonly details: Record<string, unknown> | undefined;
  readonly body: unknown;

  constructor(status: number, body: unknown, requestId: string | null) {
    const error = (body ?? {}) as Partial<ErrorBody>;
    super(typeof error.error === 'string' ? error.error : `HTTP ${status}`);
    this.name = 'SibylApiError';
    this.status = status;
    this.code = typeof error.code === 'string' ? error.code : 'UNKNOWN';
    this.requestId = typeof error.requestId === 'string' ? error.requestId : requestId;
    this.details = error.details as Record<string, unknown> | undefined;
    this.body = body;
  }
}

/** `waitForResolution` gave up: the request was still not final after `timeoutMs`. */
export class SibylTimeoutError extends Error {
  readonly requestId: string;
  /** The last status read (`PENDING` or `PROCESSING`). */
  readonly lastStatus: string;

  constructor(requestId: string, lastStatus: string, timeoutMs: number) {
    super(`AI request ${requestId} is still ${lastStatus} after ${timeoutMs} ms`);
    this.name = 'SibylTimeoutError';
    this.requestId = requestId;
    this.lastStatus = lastStatus;
  }
}

/** The `X-Request-Id` of an answer: quote it when asking for support. */
export function requestIdOf(result: { response: Response }): string | null {
  return result.response.headers.get('x-request-id');
}

/** The data of a successful answer, or a `SibylApiError` thrown for an error answer. */
export async function unwrap<T>(
  pending: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  const result = await pending;
  if (result.data !== undefined && result.response.ok) return result.data;
  throw new SibylApiError(result.response.status, result.error, requestIdOf(result));
}
