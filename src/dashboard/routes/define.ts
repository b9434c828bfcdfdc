import { parseCookie } from 'cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type, { type Static, type TObject, type TSchema } from 'typebox';
import { type Account, findAccount } from '../../accounts/index.js';
import { type Context, createContext } from '../../context.js';
import type { CoreConfig } from '../../core-settings.js';
import type { DepositConfig } from '../../deposits/index.js';
import { AppError, type ErrorCode } from '../../errors.js';
import { baseUrl } from '../../http/openapi.js';
import { type BodyRules, errorResponses } from '../../http/route.js';
import { clientAddress } from '../../lib/client-ip.js';
import { type AccessConfig, failureAddress } from '../../limits/index.js';
import type { DashboardSettings } from '../config.js';
import { resumeSession, SESSION_COOKIE, type Session } from '../sessions.js';
import type { SignInPlace } from '../siws.js';

export const DASHBOARD_API = '/dashboard/api';
export const MODES = ['live', 'sandbox'] as const;
export type Mode = (typeof MODES)[number];

/** What the dashboard reads of the configuration. */
export type DashboardConfig = Pick<CoreConfig, 'publicBaseUrl' | 'host' | 'port'> & {
  access: AccessConfig;
  deposits: DepositConfig;
  dashboard: DashboardSettings;
  /** The price of a stream minute, shown with the account's pricing. */
  liveStreams: { minuteMicros: bigint };
};

/** What the dashboard's routes share: the app's services and where the dashboard is served. */
export interface DashboardEdge {
  app: FastifyInstance;
  config: DashboardConfig;
  settings: DashboardSettings;
  /** The dashboard's origin: PUBLIC_BASE_URL's, else the address the server listens on. */
  origin(): string;
  /** Where sign-in happens: the origin's host as the SIWS domain, the origin as its URI. */
  place(): SignInPlace;
}

export function dashboardEdge(
  app: FastifyInstance,
  config: DashboardConfig,
  settings: DashboardSettings,
): DashboardEdge {
  const origin = () => {
    if (config.publicBaseUrl) return new URL(config.publicBaseUrl).origin;
    // Listening on port 0 (tests) picks a port: the origin is the one actually bound.
    const bound = app.server.address();
    const port = bound !== null && typeof bound === 'object' ? bound.port : config.port;
    return new URL(baseUrl({ ...config, port })).origin;
  };
  return {
    app,
    config,
    settings,
    origin,
    place: () => {
      const uri = origin();
      return { domain: new URL(uri).host, uri, chainId: settings.chainId };
    },
  };
}

/**
 * Who a route is for: `public` (signing in), `session` (any signed-in wallet), `account` (the
 * session wallet's account of the mode in the path, `/dashboard/api/{mode}/…`).
 */
type Scope = 'public' | 'session' | 'account';

interface ScopeInput {
  public: object;
  session: { session: Session };
  account: { session: Session; account: Account; mode: Mode };
}

export type DashboardInput<S extends Scope, P extends TSchema, Q extends TSchema, B extends TSchema> = {
  params: Static<P>;
  query: Static<Q>;
  body: Static<B>;
  requestId: string;
  ctx: Context;
} & ScopeInput[S];

export interface DashboardRouteSpec<
  S extends Scope,
  P extends TSchema,
  Q extends TSchema,
  B extends TSchema,
  R extends TObject,
> {
  scope: S;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** After `/dashboard/api` (and, for the `account` scope, after `/{mode}`). */
  url: string;
  operationId: string;
  summary: string;
  description?: string;
  params?: P;
  querystring?: Q;
  body?: B;
  response: R;
  /** The answer is a `text/event-stream` whose events' data is `response` (the handler hijacks the reply). */
  stream?: boolean;
  /** A body that is not JSON (the CSV export): its media type; the handler returns the text. */
  produces?: string;
  /** Counted against the client address's sign-in bucket (challenge and verify). */
  signIn?: boolean;
  /**
   * An `account` route for one mode only, and why: its `{mode}` admits only that one (another is
   * 400 VALIDATION_ERROR on `path.mode`, with `allowed`), so the document lists no mode it refuses.
   */
  onlyMode?: { mode: Mode; reason: string };
  errors?: ErrorCode[];
  /** The domain rules of a body the schema refused (as an API route's: `RouteSpec.bodyRules`). */
  bodyRules?: BodyRules;
  handler: (
    input: DashboardInput<S, P, Q, B>,
    request: FastifyRequest,
    reply: FastifyReply,
  ) => Promise<Static<R> | string>;
}

const Mode = Type.Enum([...MODES], { description: 'Which of the wallet’s accounts: live or sandbox' });
const NoQuery = Type.Object({}, { additionalProperties: false });
const sessions = new WeakMap<FastifyRequest, Session>();

/**
 * Declares one dashboard endpoint: its schemas and OpenAPI entry (tag `dashboard`, the session
 * cookie as its security), and the checks every one of them makes before its handler runs — no
 * caching, where the request comes from (`Origin`, `Sec-Fetch-Site`), the sign-in rate limit, the
 * session, the account's status. API keys never authenticate here: only the session cookie does.
 */
export function defineDashboardRoute<
  S extends Scope,
  P extends TSchema,
  Q extends TSchema,
  B extends TSchema,
  R extends TObject,
>(edge: DashboardEdge, spec: DashboardRouteSpec<S, P, Q, B, R>): void {
  const { app } = edge;
  const codes: ErrorCode[] = [
    'VALIDATION_ERROR',
    'INTERNAL_ERROR',
    'ORIGIN_NOT_ALLOWED',
    ...(spec.errors ?? []),
  ];
  if (spec.body) codes.push('PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE');
  if (spec.scope !== 'public') codes.push('SESSION_EXPIRED');
  if (spec.scope === 'account') codes.push('ACCOUNT_SUSPENDED');
  if (spec.signIn) codes.push('RATE_LIMIT_EXCEEDED');
  const url = `${DASHBOARD_API}${spec.scope === 'account' ? '/:mode' : ''}${spec.url}`;
  // A path segment over the router's limit is refused before the route runs, on every method
  // (http/edge.ts; a GET reaches `overlongDashboardPath` below): as the API's routes say it.
  if (url.includes(':')) codes.push('URI_TOO_LONG');

  const params =
    spec.scope === 'account'
      ? Type.Object({
          mode: spec.onlyMode
            ? Type.Enum([spec.onlyMode.mode], {
                description: `Only \`${spec.onlyMode.mode}\`: ${spec.onlyMode.reason}`,
              })
            : Mode,
          ...((spec.params as TObject | undefined)?.properties ?? {}),
        })
      : spec.params;
  const json = () =>
    Type.Object(
      {
        requestId: Type.String({ description: 'Unique id of this request (also in X-Request-Id)' }),
        ...spec.response.properties,
      },
      {
        description: (spec.response as { description?: string }).description ?? 'Success',
        additionalProperties: false,
      },
    );
  const success = spec.produces
    ? { description: 'Success', content: { [spec.produces]: { schema: { type: 'string' } } } }
    : spec.stream
      ? {
          description: (spec.response as { description?: string }).description ?? 'Success',
          content: { 'text/event-stream': { schema: json() } },
        }
      : json();

  app.route({
    method: spec.method,
    url,
    schema: {
      operationId: `dashboard${spec.operationId[0]?.toUpperCase()}${spec.operationId.slice(1)}`,
      summary: spec.summary,
      ...(spec.description ? { description: spec.description } : {}),
      tags: ['dashboard'],
      security: spec.scope === 'public' ? [] : [{ cookieAuth: [] }],
      ...(params ? { params } : {}),
      querystring: spec.querystring ?? NoQuery,
      ...(spec.body ? { body: spec.body } : {}),
      response: { 200: success, ...errorResponses(codes) },
    },
    config: {
      ...(spec.bodyRules ? { bodyRules: spec.bodyRules } : {}),
      // An open stream's session and account, checked again while it lasts (docs/api.md#event-streams).
      ...(spec.scope !== 'public'
        ? { recheckAccess: (request: FastifyRequest) => recheckSession(request) }
        : {}),
    },
    onRequest: async (request, reply) => {
      // Answers about one wallet's money and secrets: never kept by a browser or a proxy.
      reply.header('cache-control', 'no-store');
      refuseForeignOrigin(edge, request);
      if (spec.signIn) await takeSignInToken(edge, request);
      if (spec.scope === 'public') return;
      sessions.set(request, await sessionOf(request));
    },
    // Tracked like the API's handlers, so closing the app waits for those still running.
    handler: (request, reply) => app.inFlight.track(run(request, reply)),
  });

  /** The request's session, as it is now (a signed-out or expired one: SESSION_EXPIRED). */
  async function sessionOf(request: FastifyRequest): Promise<Session> {
    const session = await resumeSession(createContext(app.services.db, app.services.clock), tokenOf(request));
    if (!session) {
      throw new AppError('SESSION_EXPIRED', 'Not signed in, or the session ended: sign in with your wallet');
    }
    return session;
  }

  /** An admitted request's session and account, checked again: still signed in, the account not suspended. */
  async function recheckSession(request: FastifyRequest): Promise<void> {
    const session = await sessionOf(request);
    if (spec.scope !== 'account') return;
    const ctx = createContext(app.services.db, app.services.clock, { requestId: request.id });
    await accountOf(ctx, session, (request.params as { mode: Mode }).mode);
  }

  async function run(request: FastifyRequest, reply: FastifyReply) {
    const ctx = createContext(app.services.db, app.services.clock, { requestId: request.id });
    const input: Record<string, unknown> = {
      params: request.params,
      query: request.query,
      body: request.body,
      requestId: request.id,
      ctx,
    };
    if (spec.scope !== 'public') input.session = sessions.get(request);
    if (spec.scope === 'account') {
      const mode = (request.params as { mode: Mode }).mode;
      input.mode = mode;
      input.account = await accountOf(ctx, sessions.get(request) as Session, mode);
    }
    const result = await spec.handler(input as DashboardInput<S, P, Q, B>, request, reply);
    if (typeof result === 'string') return reply.type(spec.produces ?? 'text/plain').send(result);
    return { requestId: request.id, ...result };
  }
}

/**
 * A GET under `/dashboard/api/` that no route takes. The page's catch-all (`/dashboard/*`) would
 * otherwise answer a GET whose parameter is over the router's limit — where every other method gets
 * 414 `URI_TOO_LONG` from the router — with the page's 404: this route, more specific than the
 * page's, answers 414 for a segment over the limit, as the router does, and the API's 404 otherwise.
 */
export function overlongDashboardPath(app: FastifyInstance, maxParamLength: number): void {
  app.get(`${DASHBOARD_API}/*`, { schema: { hide: true } }, async (request) => {
    const path = request.url.split('?')[0] ?? '';
    const segments = path.split('/').map((segment) => {
      try {
        return decodeURIComponent(segment);
      } catch {
        return segment;
      }
    });
    if (segments.some((segment) => segment.length > maxParamLength)) {
      throw new AppError(
        'URI_TOO_LONG',
        `A segment of the URL path is longer than ${maxParamLength} characters`,
      );
    }
    throw new AppError('NOT_FOUND', 'No such dashboard resource');
  });
}

/** The session cookie's token, if the request carries one. */
export function tokenOf(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  return header ? parseCookie(header)[SESSION_COOKIE] : undefined;
}

/**
 * Every dashboard request — reads and streams too, which spend the account's balance — must come
 * from a page of the dashboard's own origin (docs/dashboard.md#sessions). `SameSite=Strict` does not
 * stop a page of the same site (another port, another subdomain) from sending the cookie, so the
 * browser's own headers decide: an `Origin` must be the dashboard's, a `Sec-Fetch-Site` must be
 * `same-origin` (or `none`: an address typed by the user), and a request carrying neither is refused,
 * as a change without `Origin` always was (a same-origin GET carries no `Origin`, but every browser
 * sends `Sec-Fetch-Site` to an https or loopback origin).
 */
function refuseForeignOrigin(edge: DashboardEdge, request: FastifyRequest): void {
  const origin = request.headers.origin;
  const site = request.headers['sec-fetch-site'];
  if (origin === undefined && site === undefined) {
    throw new AppError(
      'ORIGIN_NOT_ALLOWED',
      'A dashboard request must carry the Origin or the Sec-Fetch-Site header',
    );
  }
  if (
    (origin !== undefined && origin !== edge.origin()) ||
    (site !== undefined && site !== 'same-origin' && site !== 'none')
  ) {
    throw new AppError('ORIGIN_NOT_ALLOWED', 'This request comes from another origin than the dashboard’s');
  }
}

async function takeSignInToken(edge: DashboardEdge, request: FastifyRequest): Promise<void> {
  const { rateLimiter, clock } = edge.app.services;
  const address = failureAddress(
    clientAddress(
      request.socket.remoteAddress,
      request.headers['x-forwarded-for'],
      edge.config.access.trustedProxies,
    ),
  );
  const taken = rateLimiter.take(`sign-in:${address}`, edge.settings.signInLimit, clock.now().getTime());
  const decision = taken instanceof Promise ? await taken : taken;
  if (decision.allowed) return;
  const retryAfter = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  throw new AppError(
    'RATE_LIMIT_EXCEEDED',
    `Too many sign-in attempts from this address; retry in ${retryAfter} s`,
    {
      headers: { 'retry-after': String(retryAfter) },
      details: { limit: decision.limit, retryAfterSeconds: retryAfter },
    },
  );
}

/** The session wallet's account of `mode`; a suspended account is refused as the API refuses its keys. */
async function accountOf(ctx: Context, session: Session, mode: Mode): Promise<Account> {
  const id = mode === 'live' ? session.wallet.liveAccountId : session.wallet.sandboxAccountId;
  const account = await findAccount(ctx, id);
  // Wallet rows reference their accounts, which are never deleted.
  if (!account) throw new Error(`account ${id} of a signed-in wallet is missing`);
  if (account.status === 'suspended') {
    throw new AppError('ACCOUNT_SUSPENDED', `The ${mode} account is suspended; contact the operator`);
  }
  return account;
}
