import { SibylApiError } from './errors.js';
import type { components } from './schema.js';
import type { Sleep } from './transport.js';

/** One server-sent event as received: its name, its id (a resume point) and its data, parsed. */
export interface StreamMessage<E extends string = string, D = unknown> {
  event: E;
  id: string | undefined;
  data: D;
}

/** The opening event of a live-data stream: what a minute costs and the limits it counts against. */
export type StreamAnnouncement = StreamMessage<
  'stream',
  { requestId: string; minuteUsd: string; limits: Record<string, number> }
>;

export type PriceStreamMessage =
  | StreamAnnouncement
  | StreamMessage<'price', components['schemas']['PriceStreamEvent']>
  | StreamMessage<
      'unavailable',
      { requestId: string; symbol: string; error: { code: string; message: string }; at: string }
    >;

export type MarketStreamMessage =
  | StreamAnnouncement
  | StreamMessage<'market', components['schemas']['MarketStreamEvent']>
  | StreamMessage<
      'trade',
      {
        requestId: string;
        marketId: string;
        tradeId: string;
        outcome: number;
        price: number;
        shares: string;
        at: string;
      }
    >
  | StreamMessage<
      'resolved',
      {
        requestId: string;
        marketId: string;
        status: string;
        winningOutcomeIndex: number;
        winningOutcomeLabel: string | null;
        resolvedAt: string | null;
      }
    >;

export interface StreamOptions {
  /** Ends the iteration (and the connection) when aborted. */
  signal?: AbortSignal;
  /** Where to resume from (a `Last-Event-ID` kept from an earlier stream). */
  lastEventId?: string;
  /** The first reconnection wait, doubled after each failed attempt (default 1000 ms). */
  reconnectDelayMs?: number;
  /** The longest reconnection wait (default 30,000 ms). */
  maxReconnectDelayMs?: number;
  /** Called before each reconnection: why, and how long the client waits first. */
  onReconnect?: (info: { attempt: number; delayMs: number; reason: string }) => void;
}

export interface StreamDeps {
  baseUrl: string;
  apiKey: string;
  headers: Record<string, string>;
  fetch: (request: Request) => Promise<Response>;
  sleep: Sleep;
  random: () => number;
}

/** Codes of a stream's `event: error` after which reconnecting gets a stream again. */
const RECONNECT_CODES = new Set(['SHUTTING_DOWN', 'SLOW_CONSUMER', 'INTERNAL_ERROR']);
/** The HTTP status the same refusal has at connect, for a stream ended by it. */
const END_STATUS: Record<string, number> = { INSUFFICIENT_BALANCE: 402, QUOTA_EXCEEDED: 429 };
/** Refusals at connect worth waiting out: a slot a cut stream still holds, a rate limit, a restart. */
const RETRY_CODES = new Set(['STREAM_LIMIT_EXCEEDED', 'RATE_LIMIT_EXCEEDED', 'SERVICE_UNAVAILABLE']);

/**
 * A live-data stream as an async iterator (docs/streams.md): every event the service sends, across
 * reconnections. After a cut, the end of the stream, or `event: error` SHUTTING_DOWN, SLOW_CONSUMER
 * or INTERNAL_ERROR, it reconnects with `Last-Event-ID` (the last id received), waiting an
 * exponential, jittered, capped delay (none after SHUTTING_DOWN: another instance answers at once);
 * a successful connection resets the delay. It stops by throwing `SibylApiError` on what
 * reconnecting cannot mend: a 4xx refusal at connect (INSUFFICIENT_BALANCE, NOT_FOUND,
 * VALIDATION_ERROR, …, but 429 STREAM_LIMIT_EXCEEDED and RATE_LIMIT_EXCEEDED, which are waited out)
 * or the stream's `event: error` INSUFFICIENT_BALANCE or QUOTA_EXCEEDED.
 */
export async function* eventStream(
  deps: StreamDeps,
  path: string,
  query: Record<string, string>,
  options: StreamOptions = {},
): AsyncGenerator<StreamMessage> {
  const base = options.reconnectDelayMs ?? 1000;
  const cap = options.maxReconnectDelayMs ?? 30_000;
  let lastEventId = options.lastEventId;
  let attempt = 0;
  const url = `${deps.baseUrl}${path}?${new URLSearchParams(query).toString()}`;
  for (;;) {
    if (options.signal?.aborted) return;
    let reason: string;
    let immediate = false;
    try {
      const response = await deps.fetch(
        new Request(url, {
          headers: {
            ...deps.headers,
            authorization: `Bearer ${deps.apiKey}`,
            accept: 'text/event-stream',
            ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }),
          },
          ...(options.signal ? { signal: options.signal } : {}),
        }),
      );
      if (!response.ok || !response.body) {
        const body = await response.json().catch(() => undefined);
        const error = new SibylApiError(response.status, body, response.headers.get('x-request-id'));
        if (response.status < 500 && !RETRY_CODES.has(error.code)) throw error;
        reason = `${response.status} ${error.code}`;
      } else {
        attempt = 0;
        reason = 'the connection ended';
        for await (const message of readEvents(response.body)) {
          if (message.event === 'error') {
            const data = message.data as { code?: string; error?: string; requestId?: string };
            const code = data.code ?? 'UNKNOWN';
            if (!RECONNECT_CODES.has(code))
              throw new SibylApiError(END_STATUS[code] ?? 400, data, data.requestId ?? null);
            reason = `event: error ${code}`;
            immediate = code === 'SHUTTING_DOWN';
            break;
          }
          if (message.id !== undefined) lastEventId = message.id;
          yield message;
        }
      }
    } catch (err) {
      if (err instanceof SibylApiError) throw err;
      if (options.signal?.aborted) return;
      reason = err instanceof Error ? err.message : String(err);
    }
    attempt += 1;
    const delayMs = immediate
      ? 0
      : Math.round(Math.min(cap, base * 2 ** (attempt - 1)) * (0.5 + deps.random() / 2));
    options.onReconnect?.({ attempt, delayMs, reason });
    try {
      if (delayMs > 0) await deps.sleep(delayMs, options.signal);
    } catch {
      return; // aborted while waiting
    }
  }
}

/**
 * The events of a `text/event-stream` body, as the HTML standard's parser reads them: `event`,
 * `data` (lines joined), `id` (kept until changed, ignored with a NUL), comments and `retry` skipped.
 */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamMessage> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let id: string | undefined;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    for (;;) {
      const end = buffer.search(/\r\n|\r|\n/);
      if (end === -1 || (buffer[end] === '\r' && end === buffer.length - 1)) break;
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1));
      if (line === '') {
        if (data.length > 0) {
          const text = data.join('\n');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {}
          yield { event: event || 'message', id, data: parsed };
        }
        event = '';
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id' && !value.includes('\0')) id = value;
    }
  }
}
