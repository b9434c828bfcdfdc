import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import type { Database } from '../db/database.js';

const Health = Type.Object({ status: Type.String() });

/** Liveness and readiness for load balancers and orchestrators: unauthenticated and free. */
export function healthRoutes(app: FastifyInstance, deps: { db: Database }): void {
  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'healthz',
        summary: 'Liveness: the process answers',
        tags: ['health'],
        response: { 200: Health },
      },
    },
    async () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'readyz',
        summary: 'Readiness: the database answers',
        tags: ['health'],
        response: { 200: Health, 503: Health },
      },
    },
    async (request, reply) => {
      try {
        await deps.db.query('SELECT 1');
        return { status: 'ready' };
      } catch (err) {
        request.log.warn({ err }, 'readiness check failed');
        return reply.code(503).send({ status: 'unavailable' });
      }
    },
  );
}
