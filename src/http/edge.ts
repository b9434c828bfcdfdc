import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, validationError } from '../errors.js';
import { errorJson, sendError } from './errors.js';

/**
 * Answers the service writes before any route runs — requests the HTTP parser refuses, URLs the
 * router cannot read, timeouts — in the one error body, with a request id in the body and in
 * X-Request-Id, and never more than a short prefix of the input.
 */

/** Node's default limit on the request line and headers together. */
const MAX_HEADER_BYTES = 16_384;

/**
 * The server's timeouts. REQUEST_TIMEOUT_MS bounds the whole request, headers and body together;
 * Node checks its connections against it every `connectionsCheckingInterval` (30 s by default,
 * which let a slow client hold a connection for twice the bound), so the check runs often enough
 * to answer within a tenth of the bound (at most a second) of it.
 */
export function serverTimeouts(requestTimeoutMs: number) {
  return {
    requestTimeout: requestTimeoutMs,
    http: {
      requestTimeout: requestTimeoutMs,
      headersTimeout: requestTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(requestTimeoutMs / 10))),
    },
  };
}

function parserError(code: string | undefined, requestTimeoutMs: number): AppError {
  switch (code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError(
        'REQUEST_TIMEOUT',
        `The request was not received in full within ${requestTimeoutMs} ms`,
      );
    case 'HPE_HEADER_OVERFLOW':
      return new AppError(
        'HEADERS_TOO_LARGE',
        `The request line and headers are larger than ${MAX_HEADER_BYTES} bytes`,
      );
    default:
      return validationError(
        [{ path: 'request', message: 'is not a well-formed HTTP/1.1 request' }],
        'Malformed HTTP request',
      );
  }
}

/**
 * Node's `clientError`: the parser refused the bytes, or the request timed out. Written straight to
 * the socket, which is then closed — unless a response is already on its way (then there is no
 * room for another).
 */
export function clientErrorHandler(nextRequestId: () => string, requestTimeoutMs: number) {
  return function onClientError(this: FastifyInstance, err: Error & { code?: string }, socket: Socket) {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (socket.writable && !inFlight?.headersSent) {
      const error = parserError(err.code, requestTimeoutMs);
      const requestId = nextRequestId();
      const body = errorJson(error, requestId);
      this.log.debug({ code: err.code, requestId, status: error.status }, 'client error');
      socket.write(
        `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\n` +
          'Content-Type: application/json; charset=utf-8\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n` +
          `X-Request-Id: ${requestId}\r\n` +
          'Connection: close\r\n\r\n' +
          body,
      );
    }
    socket.destroy(err);
  };
}

/** What the router cannot read: a malformed percent-escape, or a path segment over the limit. */
export function frameworkErrors(maxParamLength: number) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    let appError: AppError;
    if (error.code === 'FST_ERR_BAD_URL') {
      appError = validationError(
        [{ path: 'url', message: 'has a malformed percent-escape' }],
        'The URL has a malformed percent-escape',
      );
    } else if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
      appError = new AppError(
        'URI_TOO_LONG',
        `A segment of the URL path is longer than ${maxParamLength} characters`,
      );
    } else {
      request.log.error({ err: error }, 'request failed');
      appError = new AppError('INTERNAL_ERROR', 'Internal server error; retry later');
    }
    reply.header('x-request-id', request.id);
    return sendError(reply, appError, request.id);
  };
}

/**
 * While the server drains, requests still arriving on open connections are answered 503 here (with
 * `Connection: close`) instead of by Fastify's own body: register first, before any route hook.
 */
export function refuseWhileClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (_request, reply, done) => {
    if (!closing) return done();
    reply.header('connection', 'close');
    done(new AppError('SERVICE_UNAVAILABLE', 'The service is shutting down; retry on another instance'));
  });
}

/** The longest path segment (route parameter) the router reads; longer is 414 URI_TOO_LONG. */
export const MAX_PARAM_LENGTH = 100;

const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)"?/i;

/** JSON is UTF-8 (RFC 8259): a body declared in any other charset is 415, not misread as UTF-8. */
export function charsetRefusal(contentType: string | undefined): AppError | null {
  const charset = contentType ? CHARSET.exec(contentType)?.[1]?.toLowerCase() : undefined;
  if (charset === undefined || charset === 'utf-8' || charset === 'utf8') return null;
  return new AppError(
    'UNSUPPORTED_MEDIA_TYPE',
    'JSON bodies must be UTF-8 encoded (Content-Type: application/json; charset=utf-8, or no charset)',
  );
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A JSON body's text, or the refusal of bytes that are not UTF-8: decoding them leniently would
 * turn each bad sequence (an encoded surrogate, a stray byte) into U+FFFD, and the service would
 * validate, charge for and store something other than what was sent.
 */
export function decodeJsonBody(body: Buffer): string | AppError {
  try {
    return UTF8.decode(body);
  } catch {
    return validationError([{ path: 'body', message: 'is not valid UTF-8 text' }], 'Malformed JSON body');
  }
}
