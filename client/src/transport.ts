import { IDEMPOTENT_ROUTES } from './idempotent-routes.js';

/** Waits `ms`; rejects (with the signal's reason) if the signal aborts first. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export const realSleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

export interface TransportOptions {
  /** The path part of the base URL (`/` or `/sibyl`), cut off before matching routes. */
  basePath: string;
  send: (request: Request) => Promise<Response>;
  sleep: Sleep;
  random: () => number;
  newIdempotencyKey: () => string;
  maxRateLimitRetries: number;
  maxRetries: number;
  maxRetryAfterSeconds: number;
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
}

/** Methods whose repetition changes nothing more than their first run (RFC 9110 §9.2.2). */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/** Statuses a request may be retried on: the service's 503 (nothing was done, nothing charged) and a
 * proxy's 502/504 in front of it (the request may have run: only retried when that is safe). */
const PROXY_STATUSES = new Set([502, 504]);

const ROUTE_PATTERNS = IDEMPOTENT_ROUTES.map((route) => {
  const [method, path] = route.split(' ') as [string, string];
  const pattern = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
  return { method, path: new RegExp(`^${pattern}$`) };
});

/** Whether the service takes an `Idempotency-Key` on this request (every paid or creating POST). */
export function takesIdempotencyKey(method: string, pathname: string): boolean {
  return ROUTE_PATTERNS.some((route) => route.method === method && route.path.test(pathname));
}

async function errorCodeOf(response: Response): Promise<string | undefined> {
  try {
    const body = (await response.clone().json()) as { code?: unknown };
    return typeof body.code === 'string' ? body.code : undefined;
  } catch {
    return undefined;
  }
}

function isAbort(error: unknown, request: Request): boolean {
  if (request.signal.aborted) return true;
  const name = (error as { name?: unknown } | null)?.name;
  return name === 'AbortError' || name === 'TimeoutError';
}

/**
 * The fetch under openapi-fetch: adds an `Idempotency-Key` to every request that takes one (kept
 * across its retries, so a retried payment is answered from the first and charged once), and
 * retries what is safe to retry:
 *
 * - 429 `RATE_LIMIT_EXCEEDED` after its `Retry-After` (never `QUOTA_EXCEEDED`: its wait is the rest
 *   of the period);
 * - 503 (the service did nothing and charged nothing) after its `Retry-After`;
 * - a network error, 502 or 504 — the request may have run — only when repeating it is harmless:
 *   an idempotent method, or a POST carrying its `Idempotency-Key`;
 * - 409 `IDEMPOTENCY_KEY_IN_USE` (the first attempt of this request is still running) after its
 *   `Retry-After`.
 *
 * Waits are the answer's `Retry-After` when it has one (a longer wait than `maxRetryAfterSeconds`
 * is returned to the caller instead), else exponential backoff with jitter. The last answer or
 * error is what the caller gets.
 */
export function retryingFetch(options: TransportOptions): (request: Request) => Promise<Response> {
  return async (original) => {
    const request = withIdempotencyKey(original, options);
    const safe = IDEMPOTENT_METHODS.has(request.method) || request.headers.has('idempotency-key');
    let rateLimitRetries = 0;
    let retries = 0;
    for (;;) {
      let response: Response;
      try {
        response = await options.send(request.clone());
      } catch (error) {
        if (!safe || isAbort(error, request) || retries >= options.maxRetries) throw error;
        await options.sleep(backoff(options, retries), request.signal);
        retries += 1;
        continue;
      }
      const wait = await retryWait(response, safe, options);
      if (wait === null) return response;
      const budget = wait.kind === 'rate-limit' ? rateLimitRetries : retries;
      const limit = wait.kind === 'rate-limit' ? options.maxRateLimitRetries : options.maxRetries;
      if (budget >= limit) return response;
      const ms = wait.retryAfterMs ?? backoff(options, retries);
      if (wait.kind === 'rate-limit') rateLimitRetries += 1;
      else retries += 1;
      await response.body?.cancel();
      await options.sleep(ms, request.signal);
    }
  };
}

function withIdempotencyKey(request: Request, options: TransportOptions): Request {
  if (request.headers.has('idempotency-key')) return request;
  const url = new URL(request.url);
  const base = options.basePath.replace(/\/+$/, '');
  const pathname = url.pathname.startsWith(base) ? url.pathname.slice(base.length) : url.pathname;
  if (!takesIdempotencyKey(request.method, pathname)) return request;
  const headers = new Headers(request.headers);
  headers.set('idempotency-key', options.newIdempotencyKey());
  return new Request(request, { headers });
}

interface RetryWait {
  kind: 'rate-limit' | 'transient';
  /** The answer's `Retry-After`, or null to back off. */
  retryAfterMs: number | null;
}

/** Whether to retry after this answer, and how long to wait; null returns it to the caller. */
async function retryWait(
  response: Response,
  safe: boolean,
  options: TransportOptions,
): Promise<RetryWait | null> {
  const { status } = response;
  let kind: RetryWait['kind'];
  if (status === 503) kind = 'transient';
  else if (PROXY_STATUSES.has(status) && safe) kind = 'transient';
  else if (status === 429 && (await errorCodeOf(response)) === 'RATE_LIMIT_EXCEEDED') kind = 'rate-limit';
  else if (status === 409 && (await errorCodeOf(response)) === 'IDEMPOTENCY_KEY_IN_USE') kind = 'transient';
  else return null;

  // The service's Retry-After is whole seconds; anything else is backed off like a missing one.
  const header = response.headers.get('retry-after');
  const seconds = header === null || header.trim() === '' ? Number.NaN : Number(header);
  if (!Number.isFinite(seconds) || seconds < 0)
    return { kind, retryAfterMs: kind === 'rate-limit' ? 1000 : null };
  if (seconds > options.maxRetryAfterSeconds) return null;
  return { kind, retryAfterMs: seconds * 1000 };
}

/** The wait before retry n (from 0): base × 2ⁿ capped, the upper half jittered. */
function backoff(options: TransportOptions, n: number): number {
  const ceiling = Math.min(options.retryMaxDelayMs, options.retryBaseDelayMs * 2 ** n);
  return Math.round(ceiling / 2 + options.random() * (ceiling / 2));
}
