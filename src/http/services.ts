import type { Database } from '../db/database.js';
import type { KeyClaimer } from '../idempotency/index.js';
import type { Authenticator, Principal } from '../keys/index.js';
import type { BalanceHints, Biller } from '../ledger/index.js';
import type { Clock } from '../lib/clock.js';
import type { AccessConfig, AuthFailureLimiter, RateLimiter } from '../limits/index.js';
import type { EventStreams } from './event-stream/streams.js';
import type { InFlight } from './in-flight.js';
import type { ApiRouteInfo, RoutePermission } from './route-spec.js';

/**
 * What the HTTP edge (defineRoute's hooks) reaches through `app.services`: authentication, limits,
 * billing, and the context every handler gets. Features receive their own dependencies explicitly
 * when app.ts registers their routes.
 */
export interface Services {
  /** What the edge reads of the configuration. */
  config: { access: AccessConfig };
  db: Database;
  clock: Clock;
  authenticator: Authenticator;
  biller: Biller;
  /** The balance check before paid work (ledger/balance-hints.ts). */
  balances: BalanceHints;
  keyClaimer: KeyClaimer;
  rateLimiter: RateLimiter;
  /** Failed authentications per client address; its `counts` are for metrics. */
  authFailures: AuthFailureLimiter;
  /** Every open event stream of the process, whichever route opened it (docs/architecture.md#event-streams). */
  streams: EventStreams;
}

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
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
    /** Set by the authentication hook of every API route. */
    principal: Principal | undefined;
  }
}
