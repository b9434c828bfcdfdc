import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { CommandRefusal } from './command-line.js';

export interface EventStreamClientOptions {
  /** The stream's address, its query included. */
  url: string;
  apiKey: string;
  /** Stops following (SIGINT in a command; the end of a test). */
  signal: AbortSignal;
  /** One line per reconnection, and what the command prints itself. */
  print(line: string): void;
  /** Wait before reconnecting; default 2 s. */
  reconnectMs?: number;
  /** The stream is open (it answered 200), at `url`. */
  opened?(url: string): void;
  /** Each event but the mechanism's `error`; a promise returned is awaited before the stream counts as ended. */
  event(message: EventSourceMessage): void | Promise<void>;
  /** Codes of a last `event: error` that reconnecting cannot mend (INSUFFICIENT_BALANCE): the command stops with it. */
  fatal?: ReadonlySet<string>;
}

/**
 * The command line's client of an event stream (docs/api.md#event-streams), for `sibyl webhooks
 * listen` and `sibyl stream prices`: follows `url`, reconnecting with `Last-Event-ID` when the stream
 * is cut or ends (a restart, a network change, `SHUTTING_DOWN`), and saying where it tried — "nothing
 * listens at …" when the connection is refused. A refusal that reconnecting cannot mend (a 4xx other
 * than 429, or a fatal last event) stops it with the service's error (a CommandRefusal).
 */
export async function followEventStream(options: EventStreamClientOptions): Promise<void> {
  const last: { id?: string } = {};
  while (!options.signal.aborted) {
    let reason: string;
    try {
      reason = await followOnce(options, last);
    } catch (err) {
      if (options.signal.aborted) return;
      if (err instanceof CommandRefusal) throw err;
      reason = lostReason(err, options.url);
    }
    if (options.signal.aborted) return;
    options.print(`${reason}; reconnecting`);
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, options.reconnectMs ?? 2000);
      options.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve(undefined);
      });
    });
  }
}

/** Follows one stream until it ends; answers why it ended. */
async function followOnce(options: EventStreamClientOptions, last: { id?: string }): Promise<string> {
  const response = await fetch(options.url, {
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
    const what = `the stream at ${shown(options.url)} answered ${response.status}${message ? ` (${message})` : ''}`;
    if (response.status < 500 && response.status !== 429) throw new CommandRefusal(what);
    return what;
  }
  options.opened?.(options.url);
  let ended = 'the stream ended';
  let fatal: string | undefined;
  const pending: Promise<void>[] = [];
  const parser = createParser({
    onEvent: (message: EventSourceMessage) => {
      if (message.id) last.id = message.id;
      if (message.event === 'error') {
        const { code, error } = errorOf(message.data);
        ended = `stream ended by the service (${code}: ${error})`;
        if (options.fatal?.has(code)) fatal = ended;
        return;
      }
      const done = options.event(message);
      if (done) pending.push(done);
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of response.body) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
  await Promise.all(pending);
  if (fatal) throw new CommandRefusal(fatal);
  return ended;
}

/** An `event: error`'s data, `{ error, code, requestId }`. */
function errorOf(data: string): { code: string; error: string } {
  try {
    const { code, error } = JSON.parse(data) as { code?: unknown; error?: unknown };
    if (typeof code === 'string') return { code, error: String(error) };
  } catch {}
  return { code: '?', error: data };
}

/** Why a connection failed, naming where it tried. */
function lostReason(err: unknown, url: string): string {
  const code = (err as { cause?: { code?: unknown } }).cause?.code;
  const { origin, hostname } = new URL(url);
  if (code === 'ECONNREFUSED')
    return `nothing listens at ${origin} (set SIBYL_API_URL or --api-url to the service's address)`;
  if (code === 'ENOTFOUND') return `${hostname} is not a known host (${origin})`;
  return `stream lost at ${shown(url)} (${err instanceof Error ? err.message : String(err)})`;
}

/** The address without its query (a list of symbols can be long). */
export function shown(url: string): string {
  const { origin, pathname } = new URL(url);
  return `${origin}${pathname}`;
}
