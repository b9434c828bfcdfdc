import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './schema.js';

export { verifyWebhook } from 'sibyl/webhooks';
export type { components, paths } from './schema.js';

/** Every named schema of the API (`Schemas['PriceResult']`, `Schemas['ErrorBody']`, …). */
export type Schemas = components['schemas'];
export type ErrorBody = Schemas['ErrorBody'];
export type ErrorCode = Schemas['ErrorCode'];

export interface SibylClientOptions {
  /** Where the service is, without the `/api/v1` path: e.g. `https://api.example.com`. */
  baseUrl: string;
  /** `pk_live_…` or `pk_test_…`. */
  apiKey: string;
  /**
   * How many times a 429 `RATE_LIMIT_EXCEEDED` is retried, each after its `Retry-After`
   * (default 2). A 429 `QUOTA_EXCEEDED` is never retried: its `Retry-After` can be hours.
   */
  maxRateLimitRetries?: number;
  /** The longest `Retry-After` (seconds) worth waiting for in a retry; a longer one is returned. Default 10. */
  maxRetryAfterSeconds?: number;
  /** Headers sent with every request (besides the key). */
  headers?: Record<string, string>;
  fetch?: (request: Request) => Promise<Response>;
}

export type SibylClient = Client<paths>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function errorCodeOf(response: Response): Promise<string | undefined> {
  try {
    const body = (await response.clone().json()) as { code?: unknown };
    return typeof body.code === 'string' ? body.code : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A typed client: paths, parameters, bodies and answers come from the service's OpenAPI document.
 *
 * ```ts
 * const sibyl = createSibylClient({ baseUrl: 'http://127.0.0.1:3000', apiKey });
 * const { data, error } = await sibyl.GET('/api/v1/price/{symbolOrMint}', {
 *   params: { path: { symbolOrMint: 'SOL' } },
 * });
 * ```
 */
export function createSibylClient(options: SibylClientOptions): SibylClient {
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const retries = options.maxRateLimitRetries ?? 2;
  const longestWait = options.maxRetryAfterSeconds ?? 10;
  const fetchWithRetries = async (request: Request): Promise<Response> => {
    for (let attempt = 0; ; attempt += 1) {
      const response = await send(request.clone());
      if (response.status !== 429 || attempt >= retries) return response;
      if ((await errorCodeOf(response)) !== 'RATE_LIMIT_EXCEEDED') return response;
      const seconds = Number(response.headers.get('retry-after') ?? '1');
      if (!Number.isFinite(seconds) || seconds < 0 || seconds > longestWait) return response;
      await response.body?.cancel();
      await sleep(seconds * 1000);
    }
  };
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    fetch: fetchWithRetries,
    headers: { ...options.headers, authorization: `Bearer ${options.apiKey}` },
  });
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
