import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import { AppError, validationError } from './errors.js';
import { FEATURES } from './features.js';
import { minuteMeters } from './gate/billing/meter.js';
import { registerCorsPreflight } from './gate/cors.js';
import { createGate } from './gate/gate.js';
import { lazyChildLogger, RequestLog } from './gate/request-log.js';
import type { Services } from './gate/services.js';
import { DashboardTwins } from './http/account-route.js';
import { loadCursorCodec } from './http/cursor.js';
import {
  charsetRefusal,
  clientErrorHandler,
  decodeJsonBody,
  frameworkErrors,
  MAX_PARAM_LENGTH,
  refuseWhileClosing,
  serverTimeouts,
} from './http/edge.js';
import { registerErrorHandling } from './http/errors.js';
import { LocalStreamSlots, type StreamSlots } from './http/event-stream/slots.js';
import { EventStreams } from './http/event-stream/streams.js';
import { InFlight } from './http/in-flight.js';
import { registerOpenApi } from './http/openapi.js';
import { lazySerializers } from './http/serializer.js';
import { validatorCompiler } from './http/validator.js';
import { AnswerParts, KeyClaimer } from './idempotency/index.js';
import { Authenticator, type KeyVerification, VerificationCache } from './keys/index.js';
import { BalanceHints, type Biller, CoalescingBiller, directBiller } from './ledger/index.js';
import { clientAddress } from './lib/client-ip.js';
import type { Clock } from './lib/clock.js';
import { requestIdGenerator } from './lib/ids.js';
import { illFormedString } from './lib/text.js';
import {
  AuthFailureLimiter,
  failureAddress,
  LocalRateLimiter,
  type RateLimiter,
  redisRateLimiter,
} from './limits/index.js';
import { metrics } from './metrics/metrics.js';
import { createPorts, type PortOverrides, type Ports } from './ports.js';
import { VERSION } from './version.js';

/**
 * What the API is built from: the configuration, the database and the clock; the ports, built by
 * the caller (`sibyl start` shares them with the worker) or here from the one override list.
 */
export interface AppOptions extends PortOverrides {
  config: Config;
  db: Database;
  clock: Clock;
  /** The ports, already built (the caller closes them); default: `createPorts` with the overrides. */
  ports?: Ports;
  /** The process logger; none means no logs (tests). */
  logger?: Logger;
  /** The edge's own: how charges are written (tests count them), and the rate limiter. */
  biller?: Biller;
  rateLimiter?: RateLimiter;
  /** Routes to add before the app is sealed (tests use it for probe routes). */
  extraRoutes?: (app: FastifyInstance) => void;
}

/** The composition root of the HTTP API: every port is chosen here and nowhere else. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config, db, clock } = options;
  const nextRequestId = requestIdGenerator();
  const app: FastifyInstance = Fastify({
    ...(options.logger ? { loggerInstance: options.logger as FastifyBaseLogger } : { logger: false }),
    logController: new RequestLog(),
    childLoggerFactory: lazyChildLogger,
    genReqId: nextRequestId,
    requestIdHeader: false,
    bodyLimit: config.bodyLimitBytes,
    ...serverTimeouts(config.requestTimeoutMs),
    keepAliveTimeout: config.keepAliveTimeoutMs,
    // Answers written before any route runs, in the one error body (src/http/edge.ts).
    clientErrorHandler: clientErrorHandler(nextRequestId, config.requestTimeoutMs),
    frameworkErrors: frameworkErrors(MAX_PARAM_LENGTH),
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    return503OnClosing: false,
    // An automatic HEAD twin of each GET would run the GET's handler — and bill it — for no body.
    exposeHeadRoutes: false,
    forceCloseConnections: 'idle',
    schemaController: { compilersFactory: { buildSerializer: lazySerializers } },
  });
  app.setValidatorCompiler(validatorCompiler);

  const cache = new VerificationCache<KeyVerification | null>(config.authCache, clock);
  const authenticator = new Authenticator(db, clock, cache, (err) =>
    app.log.warn({ err }, 'a key’s last use was not recorded'),
  );
  const ports = options.ports ?? (await createPorts(config, db, clock, options));
  const rateLimiter = options.rateLimiter ?? (await createRateLimiter(app, config));
  const billing = {
    db,
    clock,
    biller:
      options.biller ??
      (config.ledger.batching
        ? new CoalescingBiller(
            db,
            // The embedded database answers within the event loop's turn: batches gather a turn's charges.
            { ...config.ledger, gather: db.kind === 'pglite' },
            new AnswerParts(() => clock.now().getTime()),
          )
        : directBiller(db)),
    balances: new BalanceHints(clock),
  };
  const edge: Services = {
    ...billing,
    config,
    authenticator,
    keyClaimer: new KeyClaimer(db, clock),
    rateLimiter,
    authFailures: new AuthFailureLimiter(rateLimiter, config.access.authFailureLimit),
    streams: new EventStreams({
      clock,
      log: app.log,
      settings: config.streams,
      slots: await createStreamSlots(app, config),
      accessCheckMs: config.authCache.syncMs,
      // As the IP allow lists and the failed-authentication limit see it: IPv6 by its /64.
      addressOf: (request) =>
        failureAddress(
          clientAddress(
            request.socket.remoteAddress,
            request.headers['x-forwarded-for'],
            config.access.trustedProxies,
          ),
        ),
    }),
    meterMinutes: minuteMeters(billing),
    cursors: await loadCursorCodec(db, clock.now()),
  };
  // A revocation, a suspension or a changed key reaches the account's open streams at once.
  cache.onAccountChange((accountId) => {
    void edge.streams.accountChanged(accountId);
  });
  app.decorate('services', edge);
  app.decorate('gate', createGate(app));
  app.decorate('apiRoutes', []);
  app.decorate('dashboardTwins', new DashboardTwins());
  app.decorate('inFlight', new InFlight());
  app.decorateRequest('principal', undefined);

  // JSON only: a text/plain body is refused rather than validated as a string.
  app.removeContentTypeParser('text/plain');
  // A body-less POST (rotate, cancel) sent with Content-Type: application/json is still valid.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const refusal = charsetRefusal(request.headers['content-type']);
    if (refusal) return done(refusal, undefined);
    // Ill-formed text is refused, never stored as U+FFFD in place of what was sent (`decodeJsonBody`, src/http/edge.ts).
    const text = decodeJsonBody(body as Buffer);
    if (text instanceof AppError) return done(text, undefined);
    if (text.trim() === '') return done(null, undefined);
    return parseJson(request, text, (err, value) => {
      if (err) return done(err, undefined);
      const problem = illFormedString(text, value, 'body');
      if (problem) return done(validationError([problem]), undefined);
      return done(null, value);
    });
  });

  // Callback style: an async hook costs a promise per request on every route.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    // The route's pattern, never the raw URL: unknown paths share one label.
    metrics.answered(
      request.routeOptions.url ?? 'unmatched',
      request.method,
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    done();
  });
  refuseWhileClosing(app);
  // Before the server waits for its connections: open streams would hold it until they end.
  app.addHook('preClose', () => edge.streams.close());

  registerErrorHandling(app);
  registerCorsPreflight(app, config.access.corsMaxAgeSeconds);
  // What the features add to the document beyond their routes (the account events' `webhooks`).
  const documented = { webhooks: {}, schemas: {} };
  for (const feature of FEATURES) {
    const part = await feature.openApi?.();
    if (part) {
      Object.assign(documented.webhooks, part.webhooks);
      Object.assign(documented.schemas, part.schemas);
    }
  }
  await registerOpenApi(app, VERSION, config, documented);

  // Every feature's routes, in the list's order (src/features.ts): that order is the OpenAPI document's.
  const routeDeps = { config, db, clock, ports, log: app.log, edge };
  for (const feature of FEATURES) await feature.api?.(app, routeDeps);
  options.extraRoutes?.(app);

  cache.startSync(db, app.log);
  app.addHook('onClose', async () => {
    await app.inFlight.idle();
    await authenticator.uses.idle();
    cache.stopSync();
    await edge.rateLimiter.close();
    if (!options.ports) await ports.close();
  });
  return app;
}

/** Open event streams counted across instances in Redis when it is configured (docs/api.md#event-streams). */
async function createStreamSlots(app: FastifyInstance, config: Config): Promise<StreamSlots> {
  if (!config.redisUrl) return new LocalStreamSlots();
  const { RedisStreamSlots } = await import('./http/event-stream/redis-slots.js');
  const slots = new RedisStreamSlots(config.redisUrl, new LocalStreamSlots(), app.log);
  app.addHook('onReady', async () => {
    if (!(await slots.waitUntilReady(2000)))
      app.log.warn('Redis not reachable yet: open streams are counted per instance');
  });
  return slots;
}

async function createRateLimiter(app: FastifyInstance, config: Config): Promise<RateLimiter> {
  if (!config.redisUrl) return new LocalRateLimiter();
  const RedisRateLimiter = await redisRateLimiter();
  const limiter = new RedisRateLimiter(
    config.redisUrl,
    new LocalRateLimiter(),
    app.log,
    undefined,
    config.access.redisTimeoutMs,
  );
  app.addHook('onReady', async () => {
    if (!(await limiter.waitUntilReady(2000)))
      app.log.warn('Redis not reachable yet: rate limits are per instance');
  });
  return limiter;
}
