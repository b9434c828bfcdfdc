import { type FastifyBaseLogger, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';

/**
 * One structured line per request, written when it completes: method, URL, status, duration and
 * the caller's account and key ids. Headers (and so API keys) are never logged.
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
      url: request.url,
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
