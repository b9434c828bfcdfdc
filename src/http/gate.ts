import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TObject, TSchema } from 'typebox';
import type { Context } from '../context.js';
import type { InFlight } from './in-flight.js';
import type { ApiRouteInfo, RouteInput, RoutePermission, RoutePrincipal, RouteSpec } from './route-spec.js';

/**
 * The gate as the mechanism sees it (docs/architecture.md#the-gate): what authenticates, limits and
 * bills a declared route's requests. `defineRoute` hands each declaration to `app.gate`, which the
 * HTTP composition root installs (src/gate/, above the keys, limits, ledger and idempotency), so that
 * the mechanism imports none of those rooms while their routes import the mechanism.
 */
export interface Gate {
  /**
   * The gate of one route, chosen once when it is declared: throws on a declaration that cannot bill
   * or key as it says (a `billing` without a price, an `Idempotency-Key` on a GET…).
   */
  route<P extends TSchema, Q extends TSchema, B extends TSchema, R extends TObject>(
    spec: RouteSpec<P, Q, B, R>,
  ): GatedRoute;
  /** `input.transaction` of a route not billed in its transaction (an account route's twin). */
  plainTransaction(ctx: Context, operationId: string): RouteInput<TSchema, TSchema, TSchema>['transaction'];
}

/** The account's owner, signed in to the dashboard, calling a paid route's twin. */
export interface OwnerCall {
  accountId: string;
  mode: RoutePrincipal['mode'];
  sessionId: string;
  request: FastifyRequest;
  reply: FastifyReply;
}

export interface GatedRoute {
  /**
   * Before the body is read: authenticates the key, checks its restrictions and the route's
   * permission, takes its rate limit, and sets `request.principal`; throws the refusal.
   */
  admit(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /** Runs an admitted request by the route's billing, with or without its `Idempotency-Key`. */
  handle(request: FastifyRequest, reply: FastifyReply): Promise<object | string | Buffer>;
  /** The request's access checks again (what an open stream runs while it lasts). */
  recheck(request: FastifyRequest): Promise<void>;
  /** Runs the route for the account's owner (a paid twin, docs/dashboard.md#market-data). */
  runForOwner(call: OwnerCall): Promise<object>;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** What admits and bills every declared route's requests (installed by app.ts). */
    gate: Gate;
    /** Every route declared with defineRoute, in order. */
    apiRoutes: ApiRouteInfo[];
    /** Route handlers still running (closing waits for them). */
    inFlight: InFlight;
  }
  interface FastifyContextConfig {
    /** API routes: the permission a key needs (absent on public routes). */
    permission?: RoutePermission;
    /** API routes: whether a success is charged. */
    priced?: boolean;
    /**
     * The route's access checks (a key's, or a dashboard session's), run again on a request already
     * admitted: what an open event stream calls while it lasts (docs/api.md#event-streams). Throws
     * the refusal the same request would get now.
     */
    recheckAccess?: (request: FastifyRequest) => Promise<void>;
    /** Stream routes: the declared price of a minute, micro-USD (null: a free stream). */
    minutePrice?: bigint | null;
  }
  interface FastifyRequest {
    /** Set by the gate's admission of every API route. */
    principal: RoutePrincipal | undefined;
  }
}
