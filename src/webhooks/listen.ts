import { UsageError } from '../lib/command-line.js';
import { followEventStream } from '../lib/event-stream-client.js';

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
  /** `--events a,b`: only events of these types (the body's `type`) are forwarded; absent: all. */
  events?: readonly string[] | undefined;
}

interface StreamedEvent {
  id: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * `sibyl webhooks listen --forward-to URL`: reads the account's events from `GET /webhooks/stream`
 * with the command line's event-stream client and posts each one to `forwardTo` with its headers and
 * body unchanged, so the local receiver verifies it exactly as a delivered callback
 * (docs/webhooks.md#local-development). A stream that ends (a restart, a network change) is reopened,
 * with `Last-Event-ID` so that what came meanwhile is sent first; a refused one (401, 403) stops with
 * its error.
 */
export async function listenAndForward(options: ListenOptions): Promise<void> {
  await followEventStream({
    url: new URL('/api/v1/webhooks/stream', options.apiUrl).toString(),
    apiKey: options.apiKey,
    signal: options.signal,
    ...(options.reconnectMs !== undefined ? { reconnectMs: options.reconnectMs } : {}),
    print: options.print,
    opened: (url) => options.print(`listening: ${url} → ${options.forwardTo}`),
    event: (message) => {
      if (message.event !== 'webhook') return undefined;
      const event = JSON.parse(message.data) as StreamedEvent;
      return wanted(event, options.events) ? forward(event, options) : undefined;
    },
  });
}

/** Whether an event's type (its body's `type`: a catalog name, or `ai`, `price`, `test`) is asked for. */
function wanted(event: StreamedEvent, events: readonly string[] | undefined): boolean {
  if (!events) return true;
  try {
    const { type } = JSON.parse(event.body) as { type?: unknown };
    return typeof type === 'string' && events.includes(type);
  } catch {
    return false;
  }
}

/**
 * `--events a,b`: event types, comma-separated — catalog names (docs/webhooks.md#event-catalog) or
 * the callbacks' `ai`, `price`, `test`. Absent: every event.
 */
export function listenEvents(option: string | undefined, known: readonly string[]): string[] | undefined {
  if (option === undefined) return undefined;
  const names = option
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const allowed = ['ai', 'price', 'test', ...known];
  const unknown = names.filter((name) => !allowed.includes(name));
  if (names.length === 0 || unknown.length > 0) {
    throw new UsageError(
      `--events takes event types, comma-separated${unknown.length > 0 ? `; unknown: ${unknown.join(', ')}` : ''} (one of ${allowed.join(', ')})`,
    );
  }
  return names;
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
