import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import { migrate } from './db/migrate.js';
import { openDatabase } from './db/open.js';
import { startMetricsServer } from './http/metrics-server.js';
import { systemClock } from './lib/clock.js';
import { listenOrExplain } from './lib/listen.js';
import { createLogger, type Log } from './logger.js';
import { createPorts, type Ports } from './ports.js';
import { addressesOf, startBanner } from './start-banner.js';
import { localDevelopment, localDevelopmentNotice, withPrivateTargets } from './webhooks/index.js';
import { createWorker, type Worker } from './worker/worker.js';

export interface Roles {
  serve: boolean;
  work: boolean;
}

/** Something the process serves beside its roles, closed first at shutdown. */
export interface Closable {
  close(): Promise<void>;
}

export interface ServiceOptions {
  /**
   * On the embedded database, which one process holds: the command line's channel through which
   * operator commands run in this process (null: not served, the reason logged).
   */
  operatorChannel?(db: Database, log: Log): Promise<Closable | null>;
}

/**
 * `sibyl start | serve | work`: opens the database, applies migrations (a failure stops the
 * process), then runs the API, the worker, or both, until SIGTERM/SIGINT drains them.
 */
export async function runService(
  configured: Config,
  roles: Roles,
  options: ServiceOptions = {},
): Promise<void> {
  let config = configured;
  const logger = createLogger(config);
  const db = await openDatabase(config);
  let ports: Ports | undefined;
  let app: FastifyInstance | undefined;
  let worker: Worker | undefined;
  let metricsServer: FastifyInstance | null = null;
  let operatorChannel: Closable | null = null;
  try {
    if (db.madePrivate) {
      logger.warn(
        { dataDir: config.dataDir, entries: db.madePrivate },
        'the data directory was open to other users: made private (folders 0700, files 0600)',
      );
    }
    const applied = await migrate(db);
    if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');

    const { createWelcome, needsStarter, sandboxWelcomeLines } = await import('./first-start.js');
    const firstStart = roles.serve && (await needsStarter(db));
    // docs/webhooks.md#local-development: private callback targets on a first start's embedded database.
    const local = roles.serve && roles.work && (await localDevelopment(db, config, systemClock, firstStart));
    if (local) config = withPrivateTargets(config);
    // One set of ports for the API and the worker of this process (src/ports.ts), made once the
    // configuration is final (local development changes the webhook settings).
    ports = await createPorts(config, db, systemClock, { log: logger });
    const { secrets } = ports;
    // The attestation key, checked against the listed one before anything is served: a refused key
    // stops the start (docs/attestations.md#keys).
    await ports.attestations.ready();
    if (!secrets.encrypts && db.kind !== 'pglite') {
      logger.warn('SECRET_ENCRYPTION_KEY is not set: webhook signing secrets are stored unencrypted');
    }

    if (roles.serve) {
      app = await buildApp({ config, db, clock: systemClock, logger, ports });
      const api = app;
      await listenOrExplain(() => api.listen({ port: config.port, host: config.host }), {
        host: config.host,
        port: config.port,
        variable: 'PORT',
      });
      logger.info(
        { port: config.port, host: config.host, database: db.kind, addresses: addressesOf(config) },
        'API listening',
      );
    }
    if (roles.work) {
      worker = await createWorker({
        config,
        db,
        clock: systemClock,
        log: logger,
        ports,
      });
      await worker.start();
      logger.info('worker started');
    }
    metricsServer = await listenOrExplain(() => startMetricsServer(config.metrics), {
      host: config.metrics.host,
      port: config.metrics.port ?? 0,
      variable: 'METRICS_PORT',
    });
    if (metricsServer)
      logger.info({ port: config.metrics.port, host: config.metrics.host }, 'metrics listening');
    if (db.kind === 'pglite' && options.operatorChannel)
      operatorChannel = await options.operatorChannel(db, logger);
    // Last, once everything listens: a start that fails never makes (and loses) the starter key.
    const welcome = firstStart
      ? sandboxWelcomeLines(config, await createWelcome(db, systemClock, secrets))
      : null;
    if (roles.serve && db.kind === 'pglite') {
      const localDevelopment = local ? localDevelopmentNotice(config.port, firstStart) : [];
      const attestationKeys = await ports.attestations.publicKeys();
      process.stdout.write(
        startBanner({ config, welcome, localDevelopment, attestationKeys, madePrivate: db.madePrivate ?? 0 }),
      );
    }
  } catch (err) {
    await operatorChannel?.close().catch(() => {});
    await worker?.stop().catch(() => {});
    await metricsServer?.close().catch(() => {});
    await app?.close().catch(() => {});
    await ports?.close().catch(() => {});
    await db.close().catch(() => {});
    throw err;
  }

  installShutdown(config, logger, async () => {
    // Streaming clients first (`event: error` SHUTTING_DOWN): they reconnect elsewhere at once,
    // rather than wait out the worker's drain. No new operator command once stopping.
    await operatorChannel?.close();
    await app?.services.streams.close();
    await worker?.stop();
    await app?.close();
    await metricsServer?.close();
    await ports?.close();
    await db.close();
  });
}

function installShutdown(
  config: Config,
  logger: ReturnType<typeof createLogger>,
  close: () => Promise<void>,
): void {
  let closing = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (closing) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    closing = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.error('graceful shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownGraceMs);
    force.unref();
    close().then(
      () => {
        logger.info('stopped');
        logger.flush();
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}
