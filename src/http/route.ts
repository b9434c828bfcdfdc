import type { FastifyInstance } from 'fastify';
import Type, { type TObject, type TSchema } from 'typebox';
import { ERROR_STATUS, type ErrorCode } from '../errors.js';
import { formatUsd } from '../lib/money.js';
import { API_PREFIX, type RoutePermission, type RouteSpec } from './route-spec.js';
import { BillingProperties, errorBodySchema } from './schemas.js';

export type { Gate, GatedRoute, OwnerCall } from './gate.js';
export {
  API_PREFIX,
  type ApiRouteInfo,
  type BodyRules,
  type RouteInput,
  type RoutePermission,
  type RoutePrincipal,
  type RouteSpec,
  type RouteTransaction,
} from './route-spec.js';

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

/** What a route costs, as its description states it: per answer, per started minute of a stream, or free. */
function priceText(spec: { price?: unknown; priceNote?: string; stream?: { minutePrice?: bigint } }): string {
  if (spec.stream?.minutePrice !== undefined)
    return `${formatUsd(spec.stream.minutePrice)} USD per started minute of connection`;
  if (typeof spec.price === 'bigint') return `${formatUsd(spec.price)} USD`;
  return spec.priceNote ?? (spec.price ? 'computed' : 'free');
}

function accessNote(spec: {
  permission: RoutePermission;
  price?: unknown;
  priceNote?: string;
  stream?: { minutePrice?: bigint };
}): string {
  const price = priceText(spec);
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
  const gated = app.gate.route(spec);
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

  // An unknown query parameter is a 400 on every route (docs/api.md#errors): a query schema
  // that admits extra keys would let a misspelt parameter through silently.
  if (
    spec.querystring &&
    (spec.querystring as { additionalProperties?: unknown }).additionalProperties !== false
  ) {
    throw new Error(`${spec.operationId}: its query schema must set additionalProperties: false`);
  }
  app.apiRoutes.push({
    method: spec.method,
    url: API_PREFIX + spec.url,
    permission: spec.permission,
    priced,
  });
  if (spec.dashboardTwin) {
    const api = `${spec.method} ${API_PREFIX}${spec.url.replace(/:(\w+)/g, '{$1}')}`;
    app.dashboardTwins.add({
      method: spec.method,
      api,
      url: spec.url,
      operationId: spec.operationId,
      summary: spec.summary,
      description:
        `The dashboard's twin of \`${api}\`: the same operation, parameters, errors and answer, for the ` +
        `signed-in wallet’s account of that mode, ${priced || spec.stream?.minutePrice !== undefined ? 'charged to it at the same price (play money on the sandbox account)' : 'at no charge'} ` +
        `(docs/dashboard.md#market-data).${spec.description ? `\n\n${spec.description}` : ''}\n\n${accessNote(spec)}`,
      ...(spec.params ? { params: spec.params } : {}),
      ...(spec.querystring ? { querystring: spec.querystring } : {}),
      response: Type.Object(
        { ...spec.response.properties, ...(priced ? BillingProperties : {}) },
        { description: successDescription },
      ),
      // The key's refusals cannot happen to the owner; the route's own, and the balance's, can.
      errors: [...(spec.errors ?? []), ...(priced ? (['INSUFFICIENT_BALANCE'] as const) : [])],
      ...(spec.stream ? { stream: true } : {}),
      run: (call) => gated.runForOwner(call) as Promise<Record<string, unknown>>,
    });
  }
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
    config: {
      permission: spec.permission,
      priced,
      bodyRules: spec.bodyRules,
      recheckAccess: (request) => gated.recheck(request),
      ...(spec.stream ? { minutePrice: spec.stream.minutePrice ?? null } : {}),
    },
    // Access checks run before the body is parsed or validated, cheapest first: an unauthenticated
    // caller learns nothing about the route's input rules and costs no parsing.
    onRequest: (request, reply) => gated.admit(request, reply),
    handler: (request, reply) => app.inFlight.track(gated.handle(request, reply)),
  });
}
