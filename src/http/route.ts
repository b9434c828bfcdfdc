import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type, { type Static, type TObject, type TSchema } from 'typebox';
import type { Context } from '../context.js';
import { ERROR_STATUS, type ErrorCode, type ValidationProblem } from '../errors.js';
import { checkRestrictions, type Permission, type Principal, requirePermission } from '../keys/index.js';
import type { ChargingContext } from '../ledger/index.js';
import { clientAddress } from '../lib/client-ip.js';
import { formatUsd } from '../lib/money.js';
import { EXPOSED_HEADERS, takeRateLimit } from '../limits/index.js';
import { authenticateRequest } from './access.js';
import { routeBilling } from './billing/choose.js';
import { handleRoute, keyReader } from './route-handler.js';
import { BillingProperties, errorBodySchema } from './schemas.js';

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
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
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
  stream?: { headers?: TObject };
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

export type BodyRules = (body: unknown, now: Date) => ValidationProblem[];

/** Codes every authenticated route can answer, before its own. */
const AUTH_ERRORS: ErrorCode[] = [
  'INVALID_API_KEY',
  'API_KEY_EXPIRED',
  'API_KEY_REVOKED',
  'ACCOUNT_NOT_FOUND',
  'PERMISSION_DENIED',
  'IP_NOT_ALLOWED',
  'ORIGIN_NOT_ALLOWED',
  'ACCOUNT_SUSPENDED',
  'RATE_LIMIT_EXCEEDED',
  'INTERNAL_ERROR',
];

export const API_PREFIX = '/api/v1';

/** The query of a route that takes none: any parameter is refused, by name (docs/api.md#errors). */
const NoQuery = Type.Object({}, { additionalProperties: false });

const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[\\x20-\\x7e]+$',
      description:
        'Makes a retry safe: the first success is stored with its charge for 24 hours and replayed, ' +
        'uncharged, to a retry with the same key and request (docs/api.md#idempotency)',
    }),
  ),
});

/** What the app knows about each API route it serves, for introspection (tests, docs). */
export interface ApiRouteInfo {
  method: string;
  url: string;
  permission: RoutePermission;
  priced: boolean;
}

function accessNote(spec: { permission: RoutePermission; price?: unknown; priceNote?: string }): string {
  const price =
    typeof spec.price === 'bigint'
      ? `${formatUsd(spec.price)} USD`
      : (spec.priceNote ?? (spec.price ? 'computed' : 'free'));
  const permission = spec.permission === 'any' ? 'any key' : `\`${spec.permission}\``;
  return `Permission: ${permission}. Price: ${price}.`;
}

/** One error response per status, each listing the codes it can carry (also the dashboard's). */
export function errorResponses(codes: ErrorCode[]): Record<number, TObject> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<number, TObject> = {};
  for (const [status, list] of byStatus) out[status] = errorBodySchema(list);
  return out;
}

export function defineRoute<P extends TSchema, Q extends TSchema, B extends TSchema, R extends TObject>(
  app: FastifyInstance,
  spec: RouteSpec<P, Q, B, R>,
): void {
  const priced = spec.price !== undefined;
  // Chosen once: a declaration that cannot work fails here, not on a request.
  const billing = routeBilling(spec);
  const keyOf = keyReader(spec);
  const codes: ErrorCode[] = [...AUTH_ERRORS, ...(spec.errors ?? [])];
  // Every route validates its query (a route without one refuses any), so every route can say 400.
  codes.push('VALIDATION_ERROR');
  if (spec.body) codes.push('PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE');
  if (priced) codes.push('INSUFFICIENT_BALANCE', 'QUOTA_EXCEEDED');
  if (spec.idempotent) codes.push('IDEMPOTENCY_KEY_IN_USE', 'IDEMPOTENCY_KEY_REUSED');
  // A path segment over the router's limit is refused before the route runs (http/edge.ts).
  if (spec.url.includes(':')) codes.push('URI_TOO_LONG');

  const successDescription = (spec.response as { description?: string }).description ?? 'Success';
  const success = Type.Object(
    {
      requestId: Type.String({ description: 'Unique id of this request (also in X-Request-Id)' }),
      ...spec.response.properties,
      ...(priced ? BillingProperties : {}),
    },
    {
      title: spec.responseName ?? `${spec.operationId[0]?.toUpperCase()}${spec.operationId.slice(1)}Response`,
      description: successDescription,
      additionalProperties: false,
    },
  );

  app.apiRoutes.push({
    method: spec.method,
    url: API_PREFIX + spec.url,
    permission: spec.permission,
    priced,
  });
  app.route({
    method: spec.method,
    url: API_PREFIX + spec.url,
    schema: {
      operationId: spec.operationId,
      summary: spec.summary,
      description: spec.description ? `${spec.description}\n\n${accessNote(spec)}` : accessNote(spec),
      tags: spec.tags,
      security: [{ bearerAuth: [] }],
      ...(spec.params ? { params: spec.params } : {}),
      querystring: spec.querystring ?? NoQuery,
      ...(spec.body ? { body: spec.body } : {}),
      ...(spec.idempotent ? { headers: IdempotencyHeaders } : {}),
      ...(spec.stream?.headers ? { headers: spec.stream.headers } : {}),
      response: {
        200: spec.stream
          ? { description: successDescription, content: { 'text/event-stream': { schema: success } } }
          : success,
        ...errorResponses(codes),
      },
    },
    config: { permission: spec.permission, priced, bodyRules: spec.bodyRules },
    // Access checks run before the body is parsed or validated, cheapest first: an unauthenticated
    // caller learns nothing about the route's input rules and costs no parsing.
    onRequest: async (request, reply) => {
      const { config, rateLimiter, clock } = app.services;
      const principal = await authenticateRequest(app.services, request);
      const clientOf = () =>
        clientAddress(
          request.socket.remoteAddress,
          request.headers['x-forwarded-for'],
          config.access.trustedProxies,
        );
      const allowedOrigin = checkRestrictions(principal, clientOf, request.headers.origin);
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
    handler: (request, reply) =>
      app.inFlight.track(handleRoute(billing, keyOf, app.services, request, reply)),
  });
}
