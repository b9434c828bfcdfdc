import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../logger.js';
import type { Ports } from '../ports.js';
import type { Services } from './services.js';

/** What a feature's routes are registered with: the process's parts and the edge's own (`app.services`). */
export interface RouteDeps {
  config: Config;
  db: Database;
  clock: Clock;
  ports: Ports;
  log: Log;
  edge: Services;
}

/**
 * A feature's API part (src/feature.ts). Named here, at the HTTP edge, because it is the one type of
 * the descriptor that speaks Fastify.
 */
export type RegisterRoutes = (app: FastifyInstance, deps: RouteDeps) => Promise<void>;
