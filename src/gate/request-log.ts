import { type FastifyBaseLogger, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';
import { redactKeys } from '../keys/index.js';

/**
 * One structured line per request, written when it completes: method, URL path, status, duration
 * and the caller's account and key ids. Headers, query strings and key-shaped text are never logged.
 */
export class RequestLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    // Above info no request line is logged: then not even the line is built.
    if (!error && !levelEnabled(request.log, 'info')) return;
    const line = {
      method: request.method,
      url: loggedUrl(request.url),
      statusCode: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
      accountId: request.principal?.accountId,
      keyId: request.principal?.keyId,
    };
    if (error) request.log.error({ ...line, err: error }, 'request errored');
    else request.log.info(line, 'request');
  }

  // The error handler logs 5xx causes itself; 4xx are ordinary answers, already in the request line.
  override defaultErrorLog(): void {}
  override routeNotFound(): void {}
}

/** Longest URL path a request line carries; the rest is cut. */
const MAX_LOGGED_URL = 512;

/**
 * The path only: query strings carry whatever clients put in them (keys, among other things), and
 * anything shaped like a key in the path is redacted.
 */
function loggedUrl(url: string): string {
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  return redactKeys(path.length > MAX_LOGGED_URL ? `${path.slice(0, MAX_LOGGED_URL)}…` : path);
}

type LogMethod = (...args: unknown[]) => void;

function levelEnabled(log: FastifyBaseLogger, level: string): boolean {
  const probe = log as unknown as { isLevelEnabled?: (level: string) => boolean };
  return probe.isLevelEnabled ? probe.isLevelEnabled(level) : true;
}
const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

/**
 * Fastify gives every request a child logger bound to its request id. Creating one costs about as
 * much as a small route; this defers it until something is actually logged at an enabled level, so
 * requests that log nothing (LOG_LEVEL above info) pay nothing.
 */
export function lazyChildLogger(
  parent: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  let child: FastifyBaseLogger | undefined;
  const real = () => {
    child ??= parent.child(bindings, options);
    return child;
  };
  const enabled = (level: string) => levelEnabled(parent, level);
  const lazy = {
    get level() {
      return parent.level;
    },
    set level(level: string) {
      real().level = level;
    },
    silent: () => {},
    isLevelEnabled: enabled,
    child: (b: Bindings, o?: ChildLoggerOptions) => real().child(b, o),
  } as Record<string, unknown>;
  for (const level of LEVELS) {
    lazy[level] = ((...args: unknown[]) => {
      if (enabled(level)) (real()[level] as LogMethod)(...args);
    }) as LogMethod;
  }
  return lazy as unknown as FastifyBaseLogger;
}
