import { createParser } from 'eventsource-parser';

export interface ReceivedEvent {
  event: string | undefined;
  id: string | undefined;
  data: unknown;
}

/**
 * A client of a server-sent-event stream, parsed by `eventsource-parser` (the HTML standard's
 * algorithm, as EventSource runs it): what arrived so far, and a way to hang up.
 */
export async function openEventStream(url: string, headers: Record<string, string> = {}) {
  const abort = new AbortController();
  const response = await fetch(url, { headers, signal: abort.signal });
  const events: ReceivedEvent[] = [];
  const comments: string[] = [];
  const retries: number[] = [];
  let ended = false;
  const parser = createParser({
    onEvent: (message) =>
      events.push({ event: message.event, id: message.id, data: JSON.parse(message.data) }),
    onComment: (comment) => comments.push(comment.trim()),
    onRetry: (retry) => retries.push(retry),
  });
  const reading = (async () => {
    if (!response.ok || !response.body) return;
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body)
        parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
    } catch {}
  })().finally(() => {
    ended = true;
  });
  /** Waits until `check` holds; fails if the stream ends first. */
  const until = async (check: () => boolean) => {
    while (!check()) {
      if (ended) throw new Error(`the stream ended; received ${JSON.stringify(events)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  return {
    response,
    events,
    comments,
    retries,
    until,
    ended: () => ended,
    /** Resolves once the server has ended the stream. */
    finished: () => reading,
    close: async () => {
      abort.abort();
      await reading;
    },
  };
}

export type OpenEventStream = Awaited<ReturnType<typeof openEventStream>>;
