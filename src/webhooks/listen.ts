import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { UsageError } from '../lib/command-line.js';

export interface ListenOptions {
  /** The service, e.g. `https://api.example.com` or `http://127.0.0.1:3000`. */
  apiUrl: string;
  apiKey: string;
  /** Where each event is posted, e.g. `http://localhost:4000/webhooks`. */
  forwardTo: string;
  /** Stops listening (SIGINT in the command; the end of a test). */
  signal: AbortSignal;
  /** One line per event forwarded, per reconnection. */
  print(line: string): void;
  /** Wait before reconnecting a stream that ended; default 2 s. */
  reconnectMs?: number;
}

interface StreamedEvent {
  id: string;
  headers: Record<string, string>;
  body: string;
}

/** A stream the service refused (a bad key, a missing permission): reconnecting would not help. */
export class StreamRefusedError extends Error {
  override name = 'StreamRefusedError';
}

/**
 * `sibyl webhooks listen --forward-to URL`: reads the account's events from `GET /webhooks/stream`
 * and posts each one to `forwardTo` with its headers and body unchanged, so the local receiver
 * verifies it exactly as a delivered callback (docs/webhooks.md#local-development). A stream that ends
 * (a restart, a network change) is reopened; a refused one (401, 403) stops with its error.
 */
export async function listenAndForward(options: ListenOptions): Promise<void> {
  const streamUrl = new URL('/api/v1/webhooks/stream', options.apiUrl).toString();
  // The last event received: a reopened stream sends what came meanwhile first (Last-Event-ID).
  const last: { id?: string } = {};
  while (!options.signal.aborted) {
    try {
      const reason = await followStream(streamUrl, options, last);
      if (!options.signal.aborted)
        options.print(
          reason ? `stream ended by the service (${reason}); reconnecting` : 'stream ended; reconnecting',
        );
    } catch (err) {
      if (options.signal.aborted) return;
      if (err instanceof StreamRefusedError) throw err;
      options.print(`stream lost (${err instanceof Error ? err.message : String(err)}); reconnecting`);
    }
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, options.reconnectMs ?? 2000);
      options.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve(undefined);
      });
    });
  }
}

/**
 * Follows one stream until it ends; answers the reason the service gave in its last event
 * (`event: error`: `SHUTTING_DOWN`, `SLOW_CONSUMER`, …), if it gave one.
 */
async function followStream(
  streamUrl: string,
  options: ListenOptions,
  last: { id?: string },
): Promise<string | undefined> {
  const response = await fetch(streamUrl, {
    headers: {
      authorization: `Bearer ${options.apiKey}`,
      accept: 'text/event-stream',
      ...(last.id ? { 'last-event-id': last.id } : {}),
    },
    signal: options.signal,
  });
  if (!response.ok || !response.body) {
    const text = await response.text().catch(() => '');
    let message = text;
    try {
      const parsed = JSON.parse(text) as { error?: string; code?: string };
      message = `${parsed.code}: ${parsed.error}`;
    } catch {}
    const error = `the stream answered ${response.status}${message ? ` (${message})` : ''}`;
    if (response.status === 401 || response.status === 403) throw new StreamRefusedError(error);
    throw new Error(error);
  }
  options.print(`listening: ${streamUrl} → ${options.forwardTo}`);
  const forwards: Promise<void>[] = [];
  let reason: string | undefined;
  const parser = createParser({
    onEvent: (message: EventSourceMessage) => {
      if (message.event === 'error') reason = errorReason(message.data);
      if (message.event !== 'webhook') return;
      if (message.id) last.id = message.id;
      forwards.push(forward(JSON.parse(message.data) as StreamedEvent, options));
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of response.body) {
    parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
  }
  await Promise.all(forwards);
  return reason;
}

/** An `event: error`'s data, `{ error, code, requestId }`, as `CODE: message`. */
function errorReason(data: string): string {
  try {
    const { code, error } = JSON.parse(data) as { code?: unknown; error?: unknown };
    if (typeof code === 'string' && typeof error === 'string') return `${code}: ${error}`;
  } catch {}
  return data;
}

/** Posts one event as it would have been delivered: the same bytes, the same headers. */
async function forward(event: StreamedEvent, options: ListenOptions): Promise<void> {
  const started = performance.now();
  try {
    const response = await fetch(options.forwardTo, {
      method: 'POST',
      headers: event.headers,
      body: event.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(10_000),
    });
    await response.arrayBuffer().catch(() => undefined);
    options.print(`${event.id}  → ${response.status}  (${Math.round(performance.now() - started)} ms)`);
  } catch (err) {
    options.print(`${event.id}  → failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The command's settings: `--forward-to` (http or https), the service and the key from the environment. */
export function listenSettings(
  forwardTo: string | undefined,
  apiUrlOption: string | undefined,
  env: Record<string, string | undefined>,
  port: number,
): { apiUrl: string; apiKey: string; forwardTo: string } {
  if (!forwardTo) throw new UsageError('--forward-to URL is required (e.g. http://localhost:4000/webhooks)');
  let target: URL;
  try {
    target = new URL(forwardTo);
  } catch {
    throw new UsageError(`--forward-to "${forwardTo}" is not a URL`);
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    throw new UsageError('--forward-to takes an http:// or https:// URL');
  const apiKey = env.SIBYL_API_KEY;
  if (!apiKey) throw new UsageError('set SIBYL_API_KEY to a key with the `account` permission');
  const apiUrl = apiUrlOption ?? env.SIBYL_API_URL ?? `http://127.0.0.1:${port}`;
  try {
    new URL(apiUrl);
  } catch {
    throw new UsageError(`--api-url "${apiUrl}" is not a URL`);
  }
  return { apiUrl, apiKey, forwardTo: target.toString() };
}
