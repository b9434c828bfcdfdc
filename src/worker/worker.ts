import { createAiQueue } from '../ai/queue.js';
import { createResolver } from '../ai/resolver.js';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { type DepositWiring, depositTasks } from '../deposits/index.js';
import { HistoricalService } from '../historical/service.js';
import { aiJobResolver } from '../jobs/ai.js';
import type { AiJobResolver } from '../jobs/ports.js';
import { jobQueueHandler } from '../jobs/runner.js';
import { ledgerTasks } from '../ledger/tasks.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../logger.js';
import { lifecycleQueueHandler } from '../markets/lifecycle.js';
import { createPriceService } from '../prices/index.js';
import type { PriceVenue } from '../prices/types.js';
import { createLiveVenues } from '../prices/venues/registry.js';
import { createRetention } from '../retention/retention.js';
import { deliveryQueueHandler } from '../webhooks/delivery.js';
import { createWebhookOutbox } from '../webhooks/outbox.js';
import type { CallbackOutbox } from '../webhooks/port.js';
import { createSecretBox, type SecretBox } from '../webhooks/secret-box.js';
import { createTransport } from '../webhooks/transport.js';
import type { WebhookTransport } from '../webhooks/transport-port.js';
import { PeriodicRunner } from './periodic.js';
import { WorkQueue } from './queue.js';

export interface WorkerDeps {
  config: Config;
  db: Database;
  clock: Clock;
  log: Log;
  /** The webhook outbox that results' callbacks are written to; default: the real one. */
  callbacks?: CallbackOutbox;
  /** How webhooks are sent; default: the guarded HTTPS transport of the configuration. */
  webhookTransport?: WebhookTransport;
  /** How webhook secrets are kept at rest; default: from the configuration. */
  secrets?: SecretBox;
  /** Live price venues; default: the configured registry. */
  liveVenues?: PriceVenue[];
  /** The AI resolution scheduled AI jobs run; default: the configured models. */
  aiJobs?: AiJobResolver;
  /** Deposits: the prices at block time and the chain; default: the price services and SOLANA_RPC_URL. */
  deposits?: Pick<DepositWiring, 'prices' | 'rpc'>;
}

/** A durable work queue as the worker runs it. */
type Queue = Pick<WorkQueue<unknown>, 'name' | 'start' | 'stop' | 'drain'>;

export interface Worker {
  /** The durable work queues, by name (tests drain them by hand with a manual clock). */
  queues: ReadonlyMap<string, Queue>;
  start(): Promise<void>;
  /** Stops claiming work and waits for what is in progress. */
  stop(): Promise<void>;
}

/**
 * The background process (`sibyl work`): every feature's periodic upkeep and durable work queues.
 * This file only lists them; each feature builds its own.
 */
export function createWorker(deps: WorkerDeps): Worker {
  const { config, db, clock, log } = deps;
  const callbacks = deps.callbacks ?? createWebhookOutbox(config.webhooks);
  const transport = deps.webhookTransport ?? createTransport(config.webhooks);
  const resolver = createResolver(config.ai, clock);
  const venues = createLiveVenues(config.prices, clock);
  const prices = createPriceService(config.prices, clock, deps.liveVenues ?? venues.price);
  const periodic = new PeriodicRunner(
    [
      ...ledgerTasks({ db, log, config: config.ledger }),
      createRetention({ db, clock, log, settings: config.retention }).task,
      // Deposits from the chain (src/deposits): none when the watcher is off.
      ...depositTasks({
        db,
        clock,
        log,
        config: config.deposits,
        priceService: prices,
        historical: new HistoricalService(db, venues.candles, clock, config.prices),
        ...deps.deposits,
      }),
    ],
    { clock, log },
  );
  const queues: Queue[] = [
    createAiQueue({ db, clock, log, resolver, callbacks, config: config.ai }),
    new WorkQueue(
      jobQueueHandler({
        db,
        clock,
        log,
        prices,
        callbacks,
        ai: deps.aiJobs ?? aiJobResolver(resolver),
        settings: config.jobs,
      }),
      { db, clock, log },
    ),
    new WorkQueue(lifecycleQueueHandler({ db, clock, log, prices, resolver, settings: config.markets }), {
      db,
      clock,
      log,
    }),
    new WorkQueue(
      deliveryQueueHandler({
        db,
        clock,
        log,
        transport,
        secrets: deps.secrets ?? createSecretBox(config.webhooks),
        settings: config.webhooks,
      }),
      { db, clock, log },
    ),
  ];
  return {
    queues: new Map(queues.map((queue) => [queue.name, queue])),
    async start() {
      periodic.start();
      for (const queue of queues) await queue.start();
    },
    async stop() {
      await Promise.all([periodic.stop(), ...queues.map((queue) => queue.stop())]);
      if (!deps.webhookTransport) await transport.close();
    },
  };
}
