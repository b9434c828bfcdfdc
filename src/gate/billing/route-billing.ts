import type { FastifyReply, FastifyRequest } from 'fastify';
import type { KeyScope } from '../../idempotency/index.js';
import type { Principal } from '../../keys/index.js';
import type { Services } from '../services.js';

/** One request of a declared route, authenticated and validated. */
export interface RouteCall {
  services: Services;
  request: FastifyRequest;
  reply: FastifyReply;
  principal: Principal;
}

/** The request's Idempotency-Key, and its fingerprint (what makes a retry the same request). */
export interface Keyed {
  scope: KeyScope;
  print: string;
}

/**
 * How one route runs a request — its handler, its charge, and, under an Idempotency-Key, the
 * answer stored for replay — chosen once per route from its declaration (./choose.ts). `run` answers
 * a body for Fastify to serialise; `runKeyed` answers the bytes it stored (or replays).
 */
export interface RouteBilling {
  run(call: RouteCall): Promise<object>;
  runKeyed(call: RouteCall, keyed: Keyed): Promise<string | Buffer>;
}
