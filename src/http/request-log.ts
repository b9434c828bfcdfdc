import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';

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
