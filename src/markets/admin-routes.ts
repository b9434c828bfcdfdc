import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../db/database.js';
import { AppError, validationError } from '../errors.js';
import { API_PREFIX } from '../http/route.js';
import type { MarketsConfig } from './config.js';
import { ingestText } from './ingest/ingest.js';

export const ADMIN_EVENTS_PATH = `${API_PREFIX}/admin/markets/events`;
const CONTENT_TYPES = ['application/x-ndjson', 'application/jsonl', 'application/json'];

const sha256 = (text: string) => createHash('sha256').update(text).digest();

/**
 * POST /api/v1/admin/markets/events: the platform's NDJSON event feed (docs/markets.md). An operator
 * route, not an API route: it takes the operator's ADMIN_TOKEN as a bearer token, costs nothing, is
 * not in the OpenAPI document, and does not exist at all (404 like any unknown path) when
 * ADMIN_TOKEN is unset. Its errors use the one error body of the API.
 */
export function marketAdminRoutes(
  app: FastifyInstance,
  deps: { db: Database; settings: MarketsConfig },
): void {
  const { db, settings } = deps;
  const token = settings.adminToken;
  if (!token) return;
  // Comparing digests takes the same time whatever the token sent, its length included.
  const expected = sha256(token);

  const authenticate = (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) => {
    const header = request.headers.authorization;
    const sent = header?.startsWith('Bearer ') ? header.slice(7).trim() : null;
    if (sent === null) {
      return done(
        new AppError('INVALID_API_KEY', 'This operator route needs Authorization: Bearer <ADMIN_TOKEN>', {
          headers: { 'www-authenticate': 'Bearer' },
        }),
      );
    }
    if (!timingSafeEqual(sha256(sent), expected)) {
      return done(
        new AppError('INVALID_API_KEY', 'The operator token is wrong', {
          headers: { 'www-authenticate': 'Bearer' },
        }),
      );
    }
    done();
  };

  app.register(async (scope) => {
    // NDJSON is not one JSON document: the body reaches the handler as bytes, whatever its type.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

    scope.post(
      ADMIN_EVENTS_PATH,
      {
        schema: { hide: true },
        bodyLimit: settings.ingestBodyLimitBytes,
        onRequest: authenticate,
      },
      async (request) => {
        const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
        if (!CONTENT_TYPES.includes(type)) {
          throw validationError([
            { path: 'header.content-type', message: `must be one of ${CONTENT_TYPES.join(', ')}` },
          ]);
        }
        let text: string;
        try {
          text = new TextDecoder('utf-8', { fatal: true }).decode(request.body as Buffer);
        } catch {
          throw validationError([{ path: 'body', message: 'is not UTF-8 text' }]);
        }
        if (text.trim() === '') {
          throw validationError([{ path: 'body', message: 'has no events (one JSON event a line)' }]);
        }
        const report = await ingestText(db, text);
        return { requestId: request.id, ...report };
      },
    );
  });
}
