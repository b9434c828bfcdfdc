import type { Client } from 'openapi-fetch';
import { SibylTimeoutError, unwrap } from './errors.js';
import type { components, paths } from './schema.js';
import type { Sleep } from './transport.js';

export type AiRequestRecord = components['schemas']['AiRequestRecord'];

/** The service's polling cadence for AI requests (docs/ai.md#polling: every 5 seconds). */
export const POLL_INTERVAL_MS = 5_000;
/** Long enough for the worst case the service allows: 5 claims of a 2-minute lease. */
export const DEFAULT_RESOLUTION_TIMEOUT_MS = 15 * 60_000;

/**
 * Where a receiver hands the verified callbacks it gets, so that `waitForResolution` reads the
 * record as soon as its callback arrives instead of at the next poll:
 *
 * ```ts
 * const inbox = new WebhookInbox();
 * app.post('/sibyl', (req, res) => { inbox.deliver(verifyWebhook(req.body, req.headers, secret)); … });
 * const record = await sibyl.waitForResolution(requestId, { webhooks: inbox });
 * ```
 *
 * A callback only wakes the waiter: the answer is still the record read from the API.
 */
export class WebhookInbox {
  readonly #waiting = new Map<string, Set<() => void>>();

  /** A verified callback payload (anything with a `requestId`); wakes whoever waits for it. */
  deliver(payload: { requestId: string }): void {
    for (const wake of this.#waiting.get(payload.requestId) ?? []) wake();
  }

  /** Calls `wake` on every delivery for `requestId` until the returned function is called. */
  subscribe(requestId: string, wake: () => void): () => void {
    let set = this.#waiting.get(requestId);
    if (!set) {
      set = new Set();
      this.#waiting.set(requestId, set);
    }
    set.add(wake);
    return () => {
      set.delete(wake);
      if (set.size === 0) this.#waiting.delete(requestId);
    };
  }
}

export interface WaitOptions {
  /** Time between polls; at least, and by default, the service's 5 seconds. */
  intervalMs?: number;
  /** Give up (a `SibylTimeoutError`) after this long; default 15 minutes. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Read the record as soon as its callback is delivered here. */
  webhooks?: WebhookInbox;
}

const FINAL = new Set(['COMPLETED', 'FAILED']);

/**
 * Reads `GET /ai/request/:requestId` until its status is final (COMPLETED or FAILED) and returns
 * that record. Polls every `intervalMs` (never faster than every 5 seconds), or at once when the
 * request's callback reaches `webhooks`. An error answer (404 for an unknown id) is thrown as a
 * `SibylApiError`; transient failures are retried by the client's transport first.
 */
export async function waitForResolution(
  client: Client<paths>,
  deps: { sleep: Sleep; now: () => number },
  requestId: string,
  options: WaitOptions = {},
): Promise<AiRequestRecord> {
  const intervalMs = options.intervalMs ?? POLL_INTERVAL_MS;
  if (!(intervalMs >= POLL_INTERVAL_MS))
    throw new RangeError(`intervalMs must be at least ${POLL_INTERVAL_MS} (the service's polling cadence)`);
  const timeoutMs = options.timeoutMs ?? DEFAULT_RESOLUTION_TIMEOUT_MS;
  const deadline = deps.now() + timeoutMs;

  let arrived = false;
  let wake: (() => void) | undefined;
  const unsubscribe = options.webhooks?.subscribe(requestId, () => {
    arrived = true;
    wake?.();
  });
  try {
    for (;;) {
      arrived = false;
      const record = await unwrap(
        client.GET('/api/v1/ai/request/{requestId}', {
          params: { path: { requestId } },
          ...(options.signal ? { signal: options.signal } : {}),
        }),
      );
      if (FINAL.has(record.status)) return record;
      const left = deadline - deps.now();
      if (left <= 0) throw new SibylTimeoutError(requestId, record.status, timeoutMs);
      if (arrived) continue;
      options.signal?.throwIfAborted();
      // Sleep until the next poll, the deadline, a callback, or the caller's abort.
      const stop = new AbortController();
      const onAbort = () => stop.abort(options.signal?.reason);
      options.signal?.addEventListener('abort', onAbort, { once: true });
      wake = () => stop.abort('webhook');
      try {
        await deps.sleep(Math.min(intervalMs, left), stop.signal);
      } catch (error) {
        if (options.signal?.aborted || !arrived) throw error;
      } finally {
        wake = undefined;
        options.signal?.removeEventListener('abort', onAbort);
      }
    }
  } finally {
    unsubscribe?.();
  }
}
