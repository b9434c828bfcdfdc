import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Static, TObject, TSchema } from 'typebox';
import type { Context } from '../context.js';
import type { ErrorCode } from '../errors.js';
import type { Principal } from '../keys/index.js';
import { plainTransaction } from './billing/request.js';
import { type BodyRules, defineRoute, type RouteInput, type RouteSpec } from './route.js';

/**
 * Who calls an account route: an API key of the account, or the account's owner signed in to the
 * dashboard (no key: none of a key's bounds apply, as for the operator on the command line).
 */
export interface Caller {
  accountId: string;
  mode: Principal['mode'];
  /** The API key calling; null for the owner in the dashboard. */
  key: Principal | null;
}

export type AccountRouteInput<P extends TSchema, Q extends TSchema, B extends TSchema> = Omit<
  RouteInput<P, Q, B>,
  'principal'
> & { caller: Caller };

/**
 * A free route about the caller's own account (its keys, ledger, jobs, AI requests, webhooks) that
 * the dashboard offers too: one declaration — the same verb, schemas, errors and answer — served at
 * `/api/v1<url>` to API keys and at `/dashboard/api/{mode}<url>` to the signed-in wallet
 * (docs/dashboard.md#the-endpoints). The two doors never share an authentication: the API's hook
 * reads the key, the dashboard's the session cookie.
 */
export interface AccountRouteSpec<P extends TSchema, Q extends TSchema, B extends TSchema, R extends TObject>
  extends Omit<RouteSpec<P, Q, B, R>, 'handler' | 'price' | 'billing' | 'priceNote' | 'stream'> {
  /**
   * The dashboard's method when it differs from the API's, with the reason (shown in its OpenAPI
   * description): a GET that answers a secret is a POST there, so that it needs the dashboard's Origin.
   */
  dashboard?: { method: 'POST'; reason: string };
  handler: (input: AccountRouteInput<P, Q, B>) => Promise<Static<R>>;
}

/** What the dashboard's twin of an account route is called with (the session's account). */
export interface TwinCall {
  params: unknown;
  query: unknown;
  body: unknown;
  requestId: string;
  ctx: Context;
  accountId: string;
  mode: Principal['mode'];
  /** The signed-in session (a paid twin's owner principal counts its streams as a key's). */
  sessionId: string;
  request: FastifyRequest;
  reply: FastifyReply;
}

/** An account route as the dashboard declares its twin (src/dashboard/routes/twins.ts). */
export interface DashboardTwin {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The API's method and path (`GET /api/v1/keys`), for the twin's description. */
  api: string;
  /** The path after `/api/v1`, and after `/dashboard/api/{mode}`. */
  url: string;
  operationId: string;
  summary: string;
  description?: string;
  params?: TSchema;
  querystring?: TSchema;
  body?: TSchema;
  response: TObject;
  errors: ErrorCode[];
  bodyRules?: BodyRules;
  /** The answer is a `text/event-stream` of `response` events (the market stream's twin). */
  stream?: boolean;
  run(call: TwinCall): Promise<Record<string, unknown>>;
}

/**
 * The account routes declared so far, for the dashboard to serve. The dashboard takes them once, when
 * it registers its routes; a route declared after that would never get its twin, so declaring one
 * then fails at start-up (its feature must come before the dashboard in src/features.ts).
 */
declare module 'fastify' {
  interface FastifyInstance {
    /** The account routes the dashboard serves too (declared here, beside them, not in services.ts). */
    dashboardTwins: DashboardTwins;
  }
}

export class DashboardTwins {
  #twins: DashboardTwin[] = [];
  #taken = false;

  add(twin: DashboardTwin): void {
    if (this.#taken) {
      throw new Error(
        `${twin.operationId}: declared after the dashboard took the account routes; list its feature before the dashboard`,
      );
    }
    this.#twins.push(twin);
  }

  take(): readonly DashboardTwin[] {
    this.#taken = true;
    return this.#twins;
  }
}

export function defineAccountRoute<
  P extends TSchema,
  Q extends TSchema,
  B extends TSchema,
  R extends TObject,
>(app: FastifyInstance, spec: AccountRouteSpec<P, Q, B, R>): void {
  const { dashboard, handler, ...route } = spec;
  defineRoute(app, {
    ...route,
    handler: ({ principal, ...input }) =>
      handler({ ...input, caller: { accountId: principal.accountId, mode: principal.mode, key: principal } }),
  });
  // As the OpenAPI document writes it: `/keys/{keyId}`.
  const api = `${spec.method} /api/v1${spec.url.replace(/:(\w+)/g, '{$1}')}`;
  app.dashboardTwins.add({
    method: dashboard?.method ?? spec.method,
    api,
    url: spec.url,
    operationId: spec.operationId,
    summary: spec.summary,
    description: [
      `The dashboard's twin of \`${api}\`: the same operation and answer, for the ` +
        'signed-in wallet’s account of that mode, which acts as the account’s owner (no key’s bounds).',
      dashboard?.reason,
      spec.description,
    ]
      .filter(Boolean)
      .join('\n\n'),
    ...(spec.params ? { params: spec.params } : {}),
    ...(spec.querystring ? { querystring: spec.querystring } : {}),
    ...(spec.body ? { body: spec.body } : {}),
    response: spec.response,
    errors: spec.errors ?? [],
    ...(spec.bodyRules ? { bodyRules: spec.bodyRules } : {}),
    run: ({ params, query, body, requestId, ctx, accountId, mode }) =>
      handler({
        params: params as Static<P>,
        query: query as Static<Q>,
        body: body as Static<B>,
        requestId,
        ctx,
        transaction: plainTransaction(ctx, spec.operationId),
        caller: { accountId, mode, key: null },
      }),
  });
}
