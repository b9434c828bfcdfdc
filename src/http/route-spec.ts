import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Static, TObject, TSchema } from 'typebox';
import type { Context } from '../context.js';
import type { ErrorCode } from '../errors.js';
import type { Permission, Principal } from '../keys/index.js';
import type { ChargingContext } from '../ledger/index.js';
import type { BodyRules } from './errors.js';

export type { BodyRules };

/**
 * The declaration of an API route (`defineRoute`, http/route.ts) and what its handler gets: apart
 * from route.ts, so that the billing strategies route.ts chooses from can name them.
 */

export const API_PREFIX = '/api/v1';

export interface RouteInput<P extends TSchema, Q extends TSchema, B extends TSchema> {
  params: Static<P>;
  query: Static<Q>;
  body: Static<B>;
  principal: Principal;
  requestId: string;
  /** The request's domain context (no transaction yet). */
  ctx: Context;
  /**
   * Runs `fn` in one transaction. On a route with `billing: 'transaction'`, `fn` charges the request
   * with `tx.charge()` next to the rows the charge pays for: both commit, or neither does.
   */
  transaction<T>(fn: (tx: RouteTransaction) => Promise<T>): Promise<T>;
}

export type RouteTransaction = ChargingContext;

/**
 * What a route needs of the calling key: one permission, or `any` — any valid key of any
 * permissions (the published AI scorecard, which concerns no account).
 */
export type RoutePermission = Permission | 'any';

/**
 * The whole contract of one API route: method, path, schemas, the permission it needs, its price,
 * and the error codes it can answer besides the common ones. The handler calls a domain function
 * and returns the result; authentication, validation, billing, the `requestId` field and the
 * OpenAPI description all follow from this one declaration.
 */
export interface RouteSpec<P extends TSchema, Q extends TSchema, B extends TSchema, R extends TObject> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  permission: RoutePermission;
  /** Micro-USD charged when the handler succeeds; absent for free routes. */
  price?: bigint | ((input: RouteInput<P, Q, B>, result: Static<R>) => bigint);
  /**
   * When a priced route charges. `after` (default): once the handler has returned, coalesced with
   * other requests' charges into batch statements — for routes whose success writes nothing else.
   * `transaction`: the handler charges with `tx.charge()` inside `input.transaction`, in the same
   * transaction as the rows it creates (jobs, AI requests, outbox rows); it must charge exactly once.
   */
  billing?: 'after' | 'transaction';
  /**
   * The least a request of a route with a computed price can cost, known before its handler runs
   * (a batch prices at least one symbol): the balance must cover it before the handler does any
   * paid work (docs/api.md#money). A fixed price is its own least.
   */
  leastPrice?: bigint;
  /** How a computed price is made up, for the API reference (e.g. "0.05 + 0.01 per symbol"). */
  priceNote?: string;
  /**
   * Accepts an `Idempotency-Key` header (docs/api.md#idempotency): the first success is stored with
   * its charge and replayed to retries. For every POST that charges or creates something, never for
   * answers that carry a secret. A handler that uses `input.transaction` must call it once and
   * return its result (the stored answer is made inside that transaction).
   */
  idempotent?: boolean;
  params?: P;
  querystring?: Q;
  body?: B;
  response: R;
  /**
   * The success answer is a `text/event-stream` (the handler hijacks the reply and writes it) whose
   * events' `data` is `response`; `headers`: the request headers it reads (e.g. `Last-Event-ID`).
   */
  stream?: {
    headers?: TObject;
    /**
     * Micro-USD charged per started minute of connection (docs/streams.md#billing); absent: a free
     * stream. The price the OpenAPI description states; a stream opened with a meter of another
     * price, or with none where one is declared, is refused by the mechanism (a misdeclared route).
     */
    minutePrice?: bigint;
  };
  /**
   * Served a second time to the signed-in wallet, at `/dashboard/api/{mode}<url>` (the market data a
   * dashboard page shows): the same handler, schemas, errors and price, billed to that account
   * without a key (docs/dashboard.md#market-data). Public data only: a route about one key or that
   * changes something is an account route (`defineAccountRoute`) or stays the API's.
   */
  dashboardTwin?: boolean;
  /** The name of the success body in the OpenAPI components; default: `<OperationId>Response`. */
  responseName?: string;
  errors?: ErrorCode[];
  /**
   * The domain rules of the body that can be checked on a body the schema refused (a timestamp that
   * does not parse, an allow-list entry with host bits set): run only on that error path, so that one
   * answer names every problem, the schema's and the domain's (docs/api.md#errors). Each rule looks
   * only at fields of the right type, and never throws.
   */
  bodyRules?: BodyRules;
  handler: (input: RouteInput<P, Q, B>, request: FastifyRequest, reply: FastifyReply) => Promise<Static<R>>;
}

/** What the app knows about each API route it serves, for introspection (tests, docs). */
export interface ApiRouteInfo {
  method: string;
  url: string;
  permission: RoutePermission;
  priced: boolean;
}
