import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { accountRoutes } from './accounts/routes.js';
import type { MarketSource } from './ai/market-port.js';
import { createResolver } from './ai/resolver.js';
import { aiRoutes } from './ai/routes.js';
import type { Config } from './config.js';
import { registerDashboard } from './dashboard/index.js';
import type { Database } from './db/database.js';
import { chainDeposits, depositReadiness } from './deposits/index.js';
import { AppError, validationError } from './errors.js';
import { healthRoutes } from './health/routes.js';
import { historicalRoutes } from './historical/routes.js';
import { HistoricalService } from './historical/service.js';
import { registerCorsPreflight } from './http/cors.js';
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
import { InFlight } from './http/in-flight.js';
import { registerOpenApi } from './http/openapi.js';
import { lazyChildLogger, RequestLog } from './http/request-log.js';
import type { Services } from './http/services.js';
import { validatorCompiler } from './http/validator.js';
import { AnswerParts } from './idempotency/answer-parts.js';
import { KeyClaimer } from './idempotency/claims.js';
import { aiJobResolver } from './jobs/ai.js';
import type { AiJobResolver } from './jobs/ports.js';
import { jobRoutes } from './jobs/routes.js';
import { Authenticator, type KeyVerification } from './keys/authenticate.js';
import { keyRoutes } from './keys/routes.js';
import { VerificationCache } from './keys/verification-cache.js';
import { type Biller, directBiller } from './ledger/biller.js';
import { CoalescingBiller } from './ledger/coalescing-biller.js';
import { ledgerRoutes } from './ledger/routes.js';
import type { Clock } from './lib/clock.js';
import { requestIdGenerator } from './lib/ids.js';
import { illFormedString } from './lib/text.js';
import { AuthFailureLimiter } from './limits/auth-failures.js';
import { LocalRateLimiter, type RateLimiter } from './limits/rate-limiter.js';
import { RedisRateLimiter } from './limits/redis-rate-limiter.js';
import { marketAdminRoutes } from './markets/admin-routes.js';
import { marketSource } from './markets/market-source.js';
import { marketRoutes } from './markets/routes.js';
import { metrics } from './metrics/metrics.js';
import { createPriceService } from './prices/index.js';
import { priceRoutes } from './prices/routes.js';
import type { CandleVenue, PriceVenue } from './prices/types.js';
import { createLiveVenues } from './prices/venues/registry.js';
import { VERSION } from './version.js';
import { testEventLimit } from './webhooks/deliveries.js';
import { createWebhookOutbox } from './webhooks/outbox.js';
import type { CallbackOutbox } from './webhooks/port.js';
import { webhookRoutes } from './webhooks/routes.js';
import { createSecretBox, type SecretBox } from './webhooks/secret-box.js';
import { createTransport } from './webhooks/transport.js';
import type { WebhookTransport } from './webhooks/transport-port.js';

export interface AppOptions {
  config: Config;
  db: Database;
  clock: Clock;
  /** The process logger; none means no logs (tests). */
  logger?: Logger;
  biller?: Biller;
  rateLimiter?: RateLimiter;
  /** Live price venues; default: the configured registry (tests hand in venues on local servers). */
  liveVenues?: PriceVenue[];
  /** Live candle venues for historical prices; default: the configured registry. */
  candleVenues?: CandleVenue[];
  /** The webhook outbox results' callbacks go through (their URLs are checked at submit); default: the real one. */
  callbacks?: CallbackOutbox;
  /** How test webhooks are sent; default: the guarded HTTPS transport of the configuration. */
  webhookTransport?: WebhookTransport;
  /** How webhook secrets are kept at rest; default: from the configuration. */
  secrets?: SecretBox;
  /** Where `POST /ai/resolve { marketId }` finds markets; default: the markets tables. */
  markets?: MarketSource;
  /** Routes to add before the app is sealed (tests use it for probe routes). */
  extraRoutes?: (app: FastifyInstance) => void;
  /** The AI resolution scheduled AI jobs run; default: the configured models. */
  aiJobs?: AiJobResolver;
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
  });
  app.setValidatorCompiler(validatorCompiler);

  const cache = new VerificationCache<KeyVerification | null>(config.authCache, clock);
  const registry = createLiveVenues(config.prices, clock);
  const authenticator = new Authenticator(db, clock, cache);
  const prices = createPriceService(config.prices, clock, options.liveVenues ?? registry.price);
  const historical = new HistoricalService(db, options.candleVenues ?? registry.candles, clock, {
    outlierTolerance: config.prices.outlierTolerance,
  });
  const resolver = createResolver(config.ai, clock);
  const callbacks = options.callbacks ?? createWebhookOutbox(config.webhooks);
  const secrets = options.secrets ?? createSecretBox(config.webhooks);
  const webhookTransport = options.webhookTransport ?? createTransport(config.webhooks);
  const rateLimiter = options.rateLimiter ?? createRateLimiter(app, config);
  const edge: Services = {
    config,
    db,
    clock,
    authenticator,
    biller:
      options.biller ??
      (config.ledger.batching
        ? new CoalescingBiller(db, config.ledger, new AnswerParts(() => clock.now().getTime()))
        : directBiller(db)),
    keyClaimer: new KeyClaimer(db, clock),
    rateLimiter,
    authFailures: new AuthFailureLimiter(rateLimiter, config.access.authFailureLimit),
  };
  app.decorate('services', edge);
  app.decorate('apiRoutes', []);
  app.decorate('inFlight', new InFlight());
  app.decorateRequest('principal', undefined);

  // JSON only: a text/plain body is refused rather than validated as a string.
  app.removeContentTypeParser('text/plain');
  // A body-less POST (rotate, cancel) sent with Content-Type: application/json is still valid.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const refusal = charsetRefusal(request.headers['content-type']);
    if (refusal) return done(refusal, undefined);
    // Ill-formed text is refused, never stored as U+FFFD in place of what was sent (src/http/json-body.ts).
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

  registerErrorHandling(app);
  registerCorsPreflight(app, config.access.corsMaxAgeSeconds);
  await registerOpenApi(app, VERSION, config);

  // Every feature's routes, with what each needs.
  healthRoutes(app, {
    db,
    aiModels: resolver.liveStatus,
    deposits: () => depositReadiness(db, config.deposits),
  });
  accountRoutes(app, { secrets });
  ledgerRoutes(app);
  keyRoutes(app, { authenticator, access: config.access });
  priceRoutes(app, { prices });
  historicalRoutes(app, { historical });
  jobRoutes(app, { callbacks, ai: options.aiJobs ?? aiJobResolver(resolver) });
  marketRoutes(app, { db, clock, prices, settings: config.markets, redisUrl: config.redisUrl });
  marketAdminRoutes(app, { db, settings: config.markets });
  aiRoutes(app, {
    resolver,
    callbacks,
    markets: options.markets ?? marketSource,
    maxConcurrentSubmits: config.ai.submitConcurrency,
  });
  const webhooks = {
    db,
    clock,
    log: app.log,
    transport: webhookTransport,
    secrets,
    settings: config.webhooks,
    testEventLimit: testEventLimit(rateLimiter, config.webhooks.testLimit),
  };
  webhookRoutes(app, webhooks);
  await registerDashboard(app, {
    config,
    authenticator,
    secrets,
    callbacks,
    webhooks,
    // Deposits from the chain (src/deposits) when the watcher is configured.
    ...(config.deposits.watch !== null ? { deposits: chainDeposits } : {}),
  });
  options.extraRoutes?.(app);

  cache.startSync(db, app.log);
  app.addHook('onClose', async () => {
    await app.inFlight.idle();
    cache.stopSync();
    await edge.rateLimiter.close();
    if (!options.webhookTransport) await webhookTransport.close();
  });
  return app;
}

function createRateLimiter(app: FastifyInstance, config: Config): RateLimiter {
  if (!config.redisUrl) return new LocalRateLimiter();
  const limiter = new RedisRateLimiter(config.redisUrl, new LocalRateLimiter(), app.log);
  app.addHook('onReady', async () => {
    if (!(await limiter.waitUntilReady(2000)))
      app.log.warn('Redis not reachable yet: rate limits are per instance');
  });
  return limiter;
}
