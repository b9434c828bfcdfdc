import type { FastifyInstance } from 'fastify';
import type { Gate } from '../http/gate.js';
import { type Permission, type Principal, requirePermission } from '../keys/index.js';
import type { ChargingContext, PaidRows } from '../ledger/index.js';
import { EXPOSED_HEADERS, takeRateLimit } from '../limits/index.js';
import { authenticateRequest, keyRestrictions, recheckKeyAccess } from './access.js';
import { routeBilling } from './billing/choose.js';
import { plainTransaction } from './billing/request.js';
import { ownerPrincipal } from './owner.js';
import { handleRoute, keyReader } from './route-handler.js';

/** What the mechanism's routes are typed with (src/http/route-spec.ts `GateTypes`): the keys' and the ledger's. */
declare module '../http/route-spec.js' {
  interface GateTypes {
    principal: Principal;
    permission: Permission;
    transaction: ChargingContext;
    paidRows: PaidRows;
  }
}

/**
 * The gate of every declared route (docs/architecture.md#the-gate): authentication, restrictions,
 * permission and rate limit before the body is read, then the route's billing strategy
 * (./billing/choose.ts) with or without its `Idempotency-Key`. Installed by app.ts as `app.gate`;
 * it reads the process's edge services from `app.services` at each request.
 */
export function createGate(app: FastifyInstance): Gate {
  return {
    route(spec) {
      const billing = routeBilling(spec);
      const keyOf = keyReader(spec);
      return {
        async admit(request, reply) {
          const { config, rateLimiter, clock } = app.services;
          const principal = await authenticateRequest(app.services, request);
          const allowedOrigin = keyRestrictions(app.services, request, principal);
          if (allowedOrigin !== null) {
            // Only keys that list their browser origins answer browsers, with the origin as listed.
            reply.header('access-control-allow-origin', allowedOrigin);
            reply.header('access-control-expose-headers', EXPOSED_HEADERS);
            reply.header('vary', 'Origin');
          }
          if (spec.permission !== 'any') requirePermission(principal, spec.permission);
          const limit = await takeRateLimit(
            rateLimiter,
            principal,
            config.access.defaultRateLimit,
            clock.now().getTime(),
          );
          reply.headers(limit.headers);
          if (limit.refusal) throw limit.refusal;
          request.principal = principal;
        },
        handle: (request, reply) => handleRoute(billing, keyOf, app.services, request, reply),
        recheck: (request) => recheckKeyAccess(app.services, request, spec.permission),
        runForOwner: (call) =>
          billing.run({
            services: app.services,
            request: call.request,
            reply: call.reply,
            principal: ownerPrincipal(call),
          }),
      };
    },
    plainTransaction,
  };
}
