import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { accountRoutes } from './accounts/routes.js';
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import { healthRoutes } from './health/routes.js';
import { historicalRoutes } from './historical/routes.js';
import { HistoricalService } from './historical/service.js';
import { registerCorsPreflight } from './http/cors.js';
import { registerErrorHandling } from './http/errors.js';
import { registerOpenApi } from './http/openapi.js';
import { lazyChildLogger, RequestLog } from './http/request-log.js';
import type { Services } from './http/services.js';
import { validatorCompiler } from './http/validator.js';
import { Authenticator, type KeyVerification } from './keys/authenticate.js';
import { keyRoutes } from './keys/routes.js';
import { VerificationCache } from './keys/verification-cache.js';
import { type Biller, directBiller } from './ledger/biller.js';
import { CoalescingBiller } from './ledger/coalescing-biller.js';
import type { Clock } from './lib/clock.js';
import { requestIdGenerator } from './lib/ids.js';
import { LocalRateLimiter, type RateLimiter } from './limits/rate-limiter.js';
import { RedisRateLimiter } from './limits/redis-rate-limiter.js';
import { marketAdminRoutes } from './markets/admin-route.js';
import { marketRoutes } from './markets/routes.js';
import { createPriceService } from './prices/index.js';
import { priceRoutes } from './prices/routes.js';
import type { CandleVenue, PriceVenue } from './prices/types.js';
import { createLiveVenues } from './prices/venues/registry.js';
import { VERSION } from './version.js';

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
  /** Routes to add before the app is sealed (tests use it for probe routes). */
  extraRoutes?: (app: FastifyInstance) => void;
}

/** The composition root of the HTTP API: every port is chosen here and nowhere else. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config, db, clock } = options;
  const app: FastifyInstance = Fastify({
    ...(options.logger ? { loggerInstance: options.logger as FastifyBaseLogger } : { logger: false }),
    logController: new RequestLog(),
    childLoggerFactory: lazyChildLogger,
    genReqId: requestIdGenerator(),
    requestIdHeader: false,
    bodyLimit: config.bodyLimitBytes,
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    return503OnClosing: true,
    // An automatic HEAD twin of each GET would run the GET's handler — and bill it — for no body.
    exposeHeadRoutes: false,
    forceCloseConnections: 'idle',
  });
  app.setValidatorCompiler(validatorCompiler);

  const cache = new VerificationCache<KeyVerification | null>(config.authCache);
  const registry = createLiveVenues(config.prices);
  const services: Services = {
    config,
    db,
    clock,
    authenticator: new Authenticator(db, clock, cache),
    biller:
      options.biller ??
      (config.charges.batching ? new CoalescingBiller(db, config.charges) : directBiller(db)),
    rateLimiter: options.rateLimiter ?? createRateLimiter(app, config),
    prices: createPriceService(config, clock, options.liveVenues ?? registry.price),
    historical: new HistoricalService(db, options.candleVenues ?? registry.candles, clock, {
      outlierTolerance: config.prices.outlierTolerance,
    }),
  };
  app.decorate('services', services);
  app.decorate('apiRoutes', []);
  app.decorateRequest('principal', undefined);

  // JSON only: a text/plain body is refused rather than validated as a string.
  app.removeContentTypeParser('text/plain');
  // A body-less POST (rotate, cancel) sent with Content-Type: application/json is still valid.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (typeof body === 'string' && body.trim() === '') return done(null, undefined);
    return parseJson(request, body as string, done);
  });

  // Callback style: an async hook costs a promise per request on every route.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });

  registerErrorHandling(app);
  registerCorsPreflight(app, config.access.corsMaxAgeSeconds);
  await registerOpenApi(app, VERSION);

  healthRoutes(app);
  accountRoutes(app);
  keyRoutes(app);
  priceRoutes(app);
  historicalRoutes(app);
  marketRoutes(app);
  marketAdminRoutes(app);
  options.extraRoutes?.(app);

  cache.startSync(db, app.log);
  app.addHook('onClose', async () => {
    cache.stopSync();
    await services.rateLimiter.close();
  });
  return app;
}

function createRateLimiter(app: FastifyInstance, config: Config): RateLimiter {
  if (!config.access.redisUrl) return new LocalRateLimiter();
  const limiter = new RedisRateLimiter(config.access.redisUrl, new LocalRateLimiter(), app.log);
  app.addHook('onReady', async () => {
    if (!(await limiter.waitUntilReady(2000)))
      app.log.warn('Redis not reachable yet: rate limits are per instance');
  });
  return limiter;
}
