import type { FastifyInstance } from 'fastify';
import { createSandboxStarter, SANDBOX_WELCOME_MICROS } from './accounts/sandbox.js';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { migrate } from './db/migrate.js';
import { openDatabase } from './db/open.js';
import { startMetricsServer } from './http/metrics-server.js';
import { baseUrl } from './http/openapi.js';
import { systemClock } from './lib/clock.js';
import { formatUsd } from './lib/money.js';
import { createLogger } from './logger.js';
import { loadDemoMarkets } from './markets/demo.js';
import { createPorts } from './ports.js';
import { createWorker, type Worker } from './worker/worker.js';

export interface Roles {
  serve: boolean;
  work: boolean;
}

function printSandboxWelcome(
  config: Config,
  welcome: { accountId: string; key: string; balance: bigint; demoMarkets: number },
): void {
  const { accountId, key, balance } = welcome;
  const base = baseUrl(config);
  process.stdout.write(
    [
      '',
      '  Sibyl is running on a new embedded database, with a sandbox account:',
      '',
      `    account   ${accountId}`,
      `    balance   ${formatUsd(balance)} USD (play money)`,
      `    API key   ${key}`,
      '',
      `  and ${welcome.demoMarkets} sandbox demo markets (GET /api/v1/markets).`,
      '',
      '  The key is shown this once. Try it:',
      '',
      `    curl -H "Authorization: Bearer ${key}" ${base}/api/v1/account`,
      '',
      `  Dashboard (sign in with a Solana wallet): ${base}/dashboard/`,
      `  API reference: ${base}/docs`,
      '',
      '',
    ].join('\n'),
  );
}

/**
 * `sibyl start | serve | work`: opens the database, applies migrations (a failure stops the
 * process), then runs the API, the worker, or both, until SIGTERM/SIGINT drains them.
 */
export async function runService(config: Config, roles: Roles): Promise<void> {
  const logger = createLogger(config);
  const { db, fresh } = await openDatabase(config);
  // One set of ports for the API and the worker of this process (src/ports.ts).
  const ports = createPorts(config, db, systemClock);
  const { secrets } = ports;
  if (!secrets.encrypts && db.kind !== 'pglite') {
    logger.warn('SECRET_ENCRYPTION_KEY is not set: webhook signing secrets are stored unencrypted');
  }
  let app: FastifyInstance | undefined;
  let worker: Worker | undefined;
  let metricsServer: FastifyInstance | null = null;
  try {
    const applied = await migrate(db);
    if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');

    let welcome: { accountId: string; key: string; balance: bigint; demoMarkets: number } | undefined;
    if (fresh && db.kind === 'pglite') {
      const starter = await createSandboxStarter(db, systemClock, secrets);
      const demo = await loadDemoMarkets(db, systemClock);
      welcome = {
        accountId: starter.account.id,
        key: starter.key.key,
        balance: SANDBOX_WELCOME_MICROS,
        demoMarkets: demo.markets,
      };
    }

    if (roles.serve) {
      app = await buildApp({ config, db, clock: systemClock, logger, ports });
      await app.listen({ port: config.port, host: config.host });
      logger.info({ port: config.port, host: config.host, database: db.kind }, 'API listening');
    }
    if (roles.work) {
      worker = createWorker({
        config,
        db,
        clock: systemClock,
        log: logger,
        ports,
      });
      await worker.start();
      logger.info('worker started');
    }
    metricsServer = await startMetricsServer(config.metrics);
    if (metricsServer)
      logger.info({ port: config.metrics.port, host: config.metrics.host }, 'metrics listening');
    if (welcome) printSandboxWelcome(config, welcome);
  } catch (err) {
    await metricsServer?.close().catch(() => {});
    await app?.close().catch(() => {});
    await ports.close().catch(() => {});
    await db.close().catch(() => {});
    throw err;
  }

  installShutdown(config, logger, async () => {
    await worker?.stop();
    await app?.close();
    await metricsServer?.close();
    await ports.close();
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
