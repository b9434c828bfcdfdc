import { type Clock, systemClock } from '../../lib/clock.js';
import { readCapped, retryAfterMs } from '../../lib/http-response.js';
import { VenueError, type VenueName, type VenueSettings } from '../types.js';

const MAX_BODY_BYTES = 2 * 1024 * 1024;

export interface VenueResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON, or the raw text when the body is not JSON. */
  body: unknown;
  text: string;
}

export interface GetOptions {
  venue: VenueName;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  headers?: Record<string, string>;
  /** Non-2xx statuses the adapter wants to read itself (e.g. 404 = not listed). */
  acceptStatuses?: number[];
  /** For Retry-After given as an HTTP date. */
  clock?: Clock;
}

/**
 * GET a venue URL with its own timeout, classifying every failure as a VenueError: timeouts,
 * network errors, rate limits (429/418, with Retry-After), geo-blocks (451), other HTTP errors and
 * unreadable bodies. One venue's failure never throws anything else.
 */
export async function venueGet(url: string, options: GetOptions): Promise<VenueResponse> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  let response: Response;
  try {
    response = await fetch(url, {
      signal,
      redirect: 'error',
      headers: { accept: 'application/json', 'user-agent': 'sibyl-price-service/1', ...options.headers },
    });
  } catch (err) {
    if (timeout.aborted)
      throw new VenueError(options.venue, 'timeout', `no answer within ${options.timeoutMs} ms`);
    if (options.signal?.aborted) throw new VenueError(options.venue, 'timeout', 'request cancelled');
    throw new VenueError(options.venue, 'network', (err as Error).message);
  }
  let text: string;
  try {
    text = await readCapped(
      response,
      MAX_BODY_BYTES,
      () => new VenueError(options.venue, 'bad_response', `response larger than ${MAX_BODY_BYTES} bytes`),
    );
  } catch (err) {
    if (err instanceof VenueError) throw err;
    if (timeout.aborted)
      throw new VenueError(options.venue, 'timeout', `no answer within ${options.timeoutMs} ms`);
    throw new VenueError(options.venue, 'network', (err as Error).message);
  }
  const status = response.status;
  if (status === 429 || status === 418) {
    throw new VenueError(
      options.venue,
      'rate_limited',
      `HTTP ${status}`,
      retryAfterMs(response.headers, (options.clock ?? systemClock).now().getTime()),
    );
  }
  if (status === 451) throw new VenueError(options.venue, 'geo_blocked', 'HTTP 451: restricted location');
  const accepted = status >= 200 && status < 300 ? true : (options.acceptStatuses ?? []).includes(status);
  let body: unknown = text;
  try {
    body = text.length > 0 ? JSON.parse(text) : null;
  } catch {
    if (accepted && status >= 200 && status < 300) {
      throw new VenueError(options.venue, 'bad_response', 'body is not JSON');
    }
  }
  if (!accepted) throw new VenueError(options.venue, 'http_error', `HTTP ${status}`);
  return { status, headers: response.headers, body, text };
}

/** Parses a decimal that venues send as a string (or a number); null when it is not a finite number. */
export function toNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string' || value.trim() === '') return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The checks every adapter applies to the fields it reads: a malformed answer becomes a
 * `bad_response` VenueError naming the field, never a TypeError or a NaN price.
 */
export function fieldReaders(venue: VenueName) {
  const badResponse = (message: string) => new VenueError(venue, 'bad_response', message);
  const numberField = (value: unknown, what: string, min: 'positive' | 'non-negative'): number => {
    const n = toNumber(value);
    if (n === null) throw badResponse(`${what} is not a number`);
    if (min === 'positive' ? n <= 0 : n < 0) throw badResponse(`${what} is out of range: ${n}`);
    return n;
  };
  return { badResponse, numberField };
}

/** GET `{baseUrl}{path}?{params}` on one venue, with its timeout and the statuses it reads itself. */
export function venueGetter(
  venue: VenueName,
  settings: VenueSettings,
  acceptStatuses: number[] = [],
  clock: Clock = systemClock,
) {
  return (path: string, params: Record<string, string>, signal: AbortSignal): Promise<VenueResponse> => {
    const query = new URLSearchParams(params).toString();
    return venueGet(`${settings.baseUrl}${path}${query ? `?${query}` : ''}`, {
      venue,
      timeoutMs: settings.timeoutMs,
      signal,
      acceptStatuses,
      clock,
    });
  };
}
