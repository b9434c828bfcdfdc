import type { Database } from '../db/database.js';
import type { CursorCodec } from '../http/cursor.js';
import type { MeterMinutes } from '../http/event-stream/stream.js';
import type { EventStreams } from '../http/event-stream/streams.js';
import type { KeyClaimer } from '../idempotency/index.js';
import type { Authenticator } from '../keys/index.js';
import type { BalanceHints, Biller } from '../ledger/index.js';
import type { Clock } from '../lib/clock.js';
import type { AccessConfig, AuthFailureLimiter, RateLimiter } from '../limits/index.js';

/**
 * What the gate reaches through `app.services`: authentication, limits, billing, and the context
 * every handler gets; the rooms' routes get it as `deps.edge` (the event streams, the minute meter,
 * the authenticator, the cursor codec). Features receive their own dependencies explicitly when app.ts registers
 * their routes.
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
  /** A paid stream's meter: its minutes billed as a request billed after its answer (./billing/meter.ts). */
  meterMinutes: MeterMinutes;
  /**
   * The installation's cursor codec (http/cursor.ts), its key read once per process for every
   * cursor-paged list: the markets, a market's trades, an endpoint's deliveries.
   */
  cursors: CursorCodec;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The gate's services (installed by app.ts); the rooms' routes get them as `deps.edge`. */
    services: Services;
  }
}
