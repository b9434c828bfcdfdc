import type { FastifyInstance } from 'fastify';
import { serialiseOrigin } from '../keys/index.js';
import { API_PREFIX } from './route.js';

/**
 * CORS preflight for the API. A preflight carries no credentials, so it cannot know the key's
 * allowed origins: it answers any well-formed http(s) origin (serialised), and the real request is then checked against the key
 * (403 ORIGIN_NOT_ALLOWED, or an Access-Control-Allow-Origin only for an origin the key lists).
 */
export function registerCorsPreflight(app: FastifyInstance, maxAgeSeconds: number): void {
  app.options(`${API_PREFIX}/*`, { schema: { hide: true } }, async (request, reply) => {
    const origin = request.headers.origin === undefined ? null : serialiseOrigin(request.headers.origin);
    if (origin !== null) {
      reply.header('access-control-allow-origin', origin);
      reply.header('access-control-allow-methods', 'GET, POST, PUT, PATCH, DELETE');
      reply.header('access-control-allow-headers', 'authorization, content-type');
      reply.header('access-control-max-age', String(maxAgeSeconds));
      reply.header('vary', 'Origin');
    }
    return reply.code(204).send();
  });
}
