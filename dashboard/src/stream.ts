import { ApiError } from './api';

/**
 * A server-sent event stream read with `fetch` and a streaming reader instead of `EventSource`:
 * an `EventSource` that is refused (402 `INSUFFICIENT_BALANCE`, 403, 429 with the limit named)
 * only fires an `error` event, without the status or the body, so a page could not say why. Here a
 * refusal is the API's error body, given to `onRefused` as an ApiError (status, code, message,
 * details) and the stream stops. A stream that ends or drops after it opened is read again after
 * `retryMs`, with `Last-Event-ID` (what was missed is sent, as docs/streams.md says), as an
 * EventSource would. The session's cookie goes with the request (same origin).
 */
export interface StreamHandlers {
  /** One `event:` with its `data:` (lines joined by "\n"). */
  onEvent(type: string, data: string): void;
  /** Answered with an error status before the stream opened: the API's error, and no retry. */
  onRefused(error: ApiError): void;
  /** The stream ended or dropped, and is read again in `retryMs`. */
  onRetry?(): void;
}

export function openStream(url: string, handlers: StreamHandlers, retryMs = 3000): () => void {
  const abort = new AbortController();
  let lastEventId: string | null = null;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const read = async (): Promise<void> => {
    const response = await fetch(url, {
      credentials: 'same-origin',
      headers: { accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
      signal: abort.signal,
    });
    if (!response.ok || !response.body) {
      const body = (await response.json().catch(() => ({}))) as {
        error?: unknown;
        code?: unknown;
        details?: Record<string, unknown>;
      };
      stopped = true;
      handlers.onRefused(
        new ApiError(
          response.status,
          typeof body.code === 'string' ? body.code : `HTTP_${response.status}`,
          typeof body.error === 'string' ? body.error : response.statusText,
          body.details,
        ),
      );
      return;
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    let type = '';
    let data: string[] = [];
    let id: string | null = null;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end = buffer.search(/\r\n|\r|\n/);
      while (end >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1));
        end = buffer.search(/\r\n|\r|\n/);
        if (line === '') {
          // A blank line ends an event (a comment alone dispatches nothing).
          if (id !== null) lastEventId = id;
          if (data.length > 0) handlers.onEvent(type || 'message', data.join('\n'));
          type = '';
          data = [];
          id = null;
          if (stopped) return;
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') type = text;
        else if (field === 'data') data.push(text);
        else if (field === 'id') id = text;
      }
    }
  };

  const run = () => {
    read().then(
      () => retry(),
      // A connection that failed (not one this page closed) is read again, as an EventSource would.
      () => retry(),
    );
  };
  const retry = () => {
    if (stopped || abort.signal.aborted) return;
    handlers.onRetry?.();
    timer = setTimeout(run, retryMs);
  };
  run();
  return () => {
    stopped = true;
    clearTimeout(timer);
    abort.abort();
  };
}
