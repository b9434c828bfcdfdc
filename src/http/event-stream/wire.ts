import type { ErrorCode, StreamEndCode } from '../../errors.js';

/**
 * The text of server-sent events (the HTML standard's `text/event-stream`), as every stream writes
 * it: one `event:` name, an `id:` when the event is a point a client may resume from, and the data
 * as one line of JSON (JSON.stringify escapes every line break, so one `data:` line always suffices).
 */

/** One event a source sends: its name, its id (the client's `Last-Event-ID` once received), its data. */
export interface StreamEvent {
  event: string;
  /** Absent on the mechanism's own events (`stream`, `error`): they never move a client's resume point. */
  id?: string;
  data?: unknown;
  /**
   * The data already as one line of JSON, written as is instead of `data`: an event fanned out to
   * many streams is serialised once, not once per stream.
   */
  json?: string;
  /**
   * The data as a JSON object serialised and checked once for every stream it is fanned out to,
   * written after the stream's own `"requestId"` member (instead of `data` and `json`).
   */
  shared?: SharedData;
}

/**
 * A JSON object serialised once for a fan-out (a symbol's price, a stored market event): checked for
 * line breaks once, here, and written to each stream as `{"requestId":…,` then `members`, so that a
 * stream adds its requestId with a concatenation, not a JSON.stringify or a scan per stream.
 */
export class SharedData {
  /** The object's text after its opening brace: its members and the closing brace. */
  readonly members: string;

  constructor(json: string) {
    if (!json.startsWith('{"') || !json.endsWith('}') || UNSAFE_FIELD.test(json))
      throw new Error('event-stream: shared data that is not one line of a non-empty JSON object');
    this.members = json.slice(1);
  }
}

/** `{"requestId":"req_…",`: what a stream writes before each shared object's members. */
export function requestIdMember(requestId: string): string {
  return `{"requestId":${JSON.stringify(requestId)},`;
}

/** An event with shared data (`event.shared`), after the stream's own `requestIdMember`. */
export function sharedEventText(event: string, id: string, member: string, data: SharedData): string {
  if (UNSAFE_FIELD.test(event) || UNSAFE_FIELD.test(id))
    throw new Error(`event-stream: an event name or id with a line break or NUL (${JSON.stringify(id)})`);
  return `event: ${event}\nid: ${id}\ndata: ${member}${data.members}\n\n`;
}

/** What ends a stream, as its last event: a code of the vocabulary (src/errors.ts). */
export type StreamErrorCode = StreamEndCode | ErrorCode;

// An id or event name with a line break would end its field early and inject another; NUL makes
// the standard's parser ignore the id.
const UNSAFE_FIELD = /[\r\n\0]/;

export function eventText(event: StreamEvent): string {
  if (UNSAFE_FIELD.test(event.event) || (event.id !== undefined && UNSAFE_FIELD.test(event.id)))
    throw new Error(`event-stream: an event name or id with a line break or NUL (${JSON.stringify(event)})`);
  const id = event.id === undefined ? '' : `id: ${event.id}\n`;
  const json = event.json ?? JSON.stringify(event.data);
  if (event.json !== undefined && UNSAFE_FIELD.test(json))
    throw new Error(`event-stream: JSON data with a line break or NUL (${event.event})`);
  return `event: ${event.event}\n${id}data: ${json}\n\n`;
}

/** Comment lines (each starts with `:`): clients ignore them; proxies see a live connection. */
export function commentText(text: string): string {
  return `${text
    .split(/\r\n|\r|\n/)
    .map((line) => `: ${line}`)
    .join('\n')}\n\n`;
}

/** The last event of a stream that the service ends: `{ error, code, requestId }`, as an error body. */
export function errorEventText(code: StreamErrorCode, message: string, requestId: string): string {
  return eventText({ event: 'error', data: { error: message, code, requestId } });
}
