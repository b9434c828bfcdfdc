import { brotliDecompressSync, constants, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';
import { Agent, type Dispatcher, request } from 'undici';

/**
 * How provider calls go out (every adapter's `fetch`): undici's `request`, answered as the
 * `Response` the AI SDK reads.
 */

/** Redirect statuses that `fetch` would follow (with a `location`). */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Statuses whose `Response` has no body. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** Provider calls' connections: kept alive between calls, each provider's pool reused by every question. */
const providerAgent = new Agent({ keepAliveTimeout: 30_000 });

/**
 * The body as `fetch` gives it: decoded from the content codings it asks for (gzip, deflate, br),
 * last applied first; a coding it does not know leaves the bytes as they are, as `fetch` does.
 */
function decoded(bytes: Uint8Array, contentEncoding: string | string[] | undefined): Uint8Array {
  if (contentEncoding === undefined) return bytes;
  const codings = [contentEncoding]
    .flat()
    .flatMap((value) => value.split(','))
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  let out = bytes;
  for (const coding of codings.reverse()) {
    if (coding === 'gzip' || coding === 'x-gzip')
      out = gunzipSync(out, { finishFlush: constants.Z_SYNC_FLUSH });
    else if (coding === 'br') out = brotliDecompressSync(out);
    else if (coding === 'deflate') {
      // zlib-wrapped as the standard says, or raw deflate as some servers send it.
      out = (out[0] ?? 0) % 16 === 8 ? inflateSync(out) : inflateRawSync(out);
    } else return out;
  }
  return out;
}

/**
 * A provider's answer, read whole, as the `Response` the SDK reads — without the web stream a
 * `Response` keeps its body in: Node 20 makes each `ReadableStream` transferable as it builds it, a
 * cost of every model call (docs/performance.md#ai-resolution-with-tools). Its status and headers
 * are a real `Response`'s; its `body` is the bytes as one chunk through `getReader()` (`read`,
 * `cancel`, `releaseLock`: all the AI SDK reads of a body), and `text()`, `json()`, `arrayBuffer()`,
 * `blob()` answer the same bytes. A body is read once, as `fetch`'s is.
 */
function readResponse(bytes: Uint8Array | null, init: ResponseInit): Response {
  const response = new Response(null, init);
  let used = false;
  const take = (): Uint8Array => {
    if (used) throw new TypeError('Body is unusable: Body has already been read');
    used = true;
    return bytes ?? new Uint8Array(0);
  };
  const text = async () => new TextDecoder().decode(take());
  const reader = (chunk: Uint8Array) => {
    let done = false;
    return {
      closed: Promise.resolve(undefined),
      read: async () => {
        if (done) return { done: true as const, value: undefined };
        done = true;
        return { done: false as const, value: chunk };
      },
      cancel: async () => {
        done = true;
      },
      releaseLock: () => {},
    };
  };
  // One body object, however often `body` is read (the SDK checks it for null, then reads it); its
  // bytes are taken when a reader is made, as a stream's are when read.
  const body =
    bytes === null
      ? null
      : {
          get locked() {
            return used;
          },
          getReader: () => reader(take()),
          cancel: async () => {
            used = true;
          },
        };
  Object.defineProperties(response, {
    bodyUsed: { get: () => used },
    body: { get: () => body },
    text: { value: text },
    json: { value: async () => JSON.parse(await text()) },
    arrayBuffer: {
      value: async () => {
        const b = take();
        return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
      },
    },
    blob: { value: async () => new Blob([take()], { type: response.headers.get('content-type') ?? '' }) },
    clone: {
      value: () => {
        if (used) throw new TypeError('Response.clone: Body has already been consumed.');
        return readResponse(bytes, init);
      },
    },
  });
  return response;
}

function requestHeaders(headers: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = { 'accept-encoding': 'gzip, deflate, br' };
  if (headers === undefined || headers === null) return out;
  if (headers instanceof Headers || Array.isArray(headers)) {
    for (const [name, value] of new Headers(headers)) out[name] = value;
    return out;
  }
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name.toLowerCase()] = String(value);
  }
  return out;
}

/**
 * How provider calls go out: one undici `request` answered as the `Response` the SDK reads, at a
 * fraction of `fetch`'s CPU a call (docs/performance.md#ai-evaluation), with `fetch`'s failures:
 * a redirect is never followed (`redirect: 'error'`: a 3xx is a failed call, not a hop to another
 * host), a connection that fails rejects with `TypeError('fetch failed')` and its cause, and an
 * aborted call with the signal's reason.
 */
export const noRedirectFetch: typeof fetch = async (input, init) => {
  if (input instanceof Request) throw new TypeError('provider calls take a URL, not a Request');
  const body = init?.body ?? undefined;
  if (body !== undefined && typeof body !== 'string' && !(body instanceof Uint8Array)) {
    throw new TypeError('provider calls send a string or bytes');
  }
  const signal = init?.signal ?? undefined;
  signal?.throwIfAborted();
  const failed = (cause: unknown) => {
    if (signal?.aborted) return signal.reason;
    return new TypeError('fetch failed', { cause });
  };
  let answer: Dispatcher.ResponseData;
  try {
    answer = await request(String(input), {
      dispatcher: providerAgent,
      method: (init?.method ?? 'GET') as Dispatcher.HttpMethod,
      headers: requestHeaders(init?.headers),
      body,
      signal,
    });
  } catch (err) {
    throw failed(err);
  }
  const status = answer.statusCode;
  if (REDIRECTS.has(status) && answer.headers.location !== undefined) {
    answer.body.dump().catch(() => {});
    throw new TypeError('fetch failed', { cause: new Error('unexpected redirect') });
  }
  let bytes: Uint8Array;
  try {
    bytes = decoded(new Uint8Array(await answer.body.arrayBuffer()), answer.headers['content-encoding']);
  } catch (err) {
    throw failed(err);
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.append(name, value);
  }
  return readResponse(NULL_BODY.has(status) ? null : bytes, {
    status,
    statusText: answer.statusText,
    headers,
  });
};
