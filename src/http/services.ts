import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { HistoricalService } from '../historical/service.js';
import type { Authenticator, Principal } from '../keys/authenticate.js';
import type { Permission } from '../keys/permissions.js';
import type { Biller } from '../ledger/biller.js';
import type { Clock } from '../lib/clock.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import type { PriceService } from '../prices/service.js';
import type { ApiRouteInfo } from './route.js';

/** What routes and hooks reach through `app.services`; built once at the composition root. */
export interface Services {
  config: Config;
  db: Database;
  clock: Clock;
  authenticator: Authenticator;
  biller: Biller;
  prices: PriceService;
  historical: HistoricalService;
  rateLimiter: RateLimiter;
}

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
    /** Every route declared with defineRoute, in order. */
    apiRoutes: ApiRouteInfo[];
  }
  interface FastifyContextConfig {
    /** API routes: the permission a key needs (absent on public routes). */
    permission?: Permission;
    /** API routes: whether a success is charged. */
    priced?: boolean;
  }
  interface FastifyRequest {
    /** Set by the authentication hook of every API route. */
    principal: Principal | undefined;
  }
}
