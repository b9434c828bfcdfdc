import type { FastifyInstance } from 'fastify';

/**
 * A feature's API part (src/feature.ts): registers its routes on the application with what the
 * room reads of the process (`D`, stated by the room; `app.ts` hands the whole). Named here, at the
 * HTTP edge, because it is the one type of the descriptor that speaks Fastify.
 */
export type RegisterRoutes<D> = (app: FastifyInstance, deps: D) => Promise<void>;
