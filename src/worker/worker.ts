import { createAiQueue } from '../ai/queue.js';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { type DepositWiring, depositTasks } from '../deposits/index.js';
import { jobQueueHandler } from '../jobs/runner.js';
import { ledgerTasks } from '../ledger/tasks.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../logger.js';
import { lifecycleQueueHandler } from '../markets/lifecycle.js';
import { createPorts, type PortOverrides, type Ports } from '../ports.js';
import { PeriodicRunner } from '../queue/periodic.js';
import { WorkQueue } from '../queue/queue.js';
import { createRetention } from '../retention/retention.js';
import { deliveryQueueHandler } from '../webhooks/delivery.js';

/** What the worker is built from; the ports as for the API (src/ports.ts). */
export interface WorkerDeps extends PortOverrides {
  config: Config;
  db: Database;
  clock: Clock;
  log: Log;
  /** The ports, already built (the caller closes them); default: `createPorts` with the overrides. */
  ports?: Ports;
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
  const ports = deps.ports ?? createPorts(config, db, clock, deps);
  const { prices, resolver, callbacks } = ports;
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
        historical: ports.historical,
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
        ai: ports.aiJobs,
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
        transport: ports.webhookTransport,
        secrets: ports.secrets,
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
      if (!deps.ports) await ports.close();
    },
  };
}
