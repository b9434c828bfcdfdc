import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { idempotencyTasks } from '../idempotency/tasks.js';
import type { AiJobResolver, CallbackOutbox } from '../jobs/ports.js';
import { jobQueueHandler } from '../jobs/runner.js';
import { unwiredAi, unwiredOutbox } from '../jobs/unwired.js';
import { keyTasks } from '../keys/tasks.js';
import { ledgerTasks } from '../ledger/tasks.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../logger.js';
import { createPriceService } from '../prices/index.js';
import type { PriceVenue } from '../prices/types.js';
import { createLiveVenues } from '../prices/venues/registry.js';
import { PeriodicRunner } from './periodic.js';
import { WorkQueue } from './queue.js';

export interface WorkerDeps {
  config: Config;
  db: Database;
  clock: Clock;
  log: Log;
  /** Where job results go, and the AI resolution jobs run. */
  outbox?: CallbackOutbox;
  aiJobs?: AiJobResolver;
  /** Live price venues; default: the configured registry. */
  liveVenues?: PriceVenue[];
}

export interface Worker {
  /** The durable work queues, by name (tests drain them by hand). */
  queues: ReadonlyMap<string, WorkQueue<never>>;
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
  const periodic = new PeriodicRunner(
    [...ledgerTasks({ db, log, config: config.ledger }), ...keyTasks({ db }), ...idempotencyTasks({ db })],
    { clock, log },
  );
  const prices = createPriceService(
    config.prices,
    clock,
    deps.liveVenues ?? createLiveVenues(config.prices, clock).price,
  );
  const queues = [
    new WorkQueue(
      jobQueueHandler({
        db,
        clock,
        log,
        prices,
        outbox: deps.outbox ?? unwiredOutbox,
        ai: deps.aiJobs ?? unwiredAi,
        settings: config.jobs,
      }),
      { db, clock, log },
    ),
  ];
  return {
    queues: new Map(queues.map((queue) => [queue.name, queue as unknown as WorkQueue<never>])),
    async start() {
      periodic.start();
      for (const queue of queues) await queue.start();
    },
    async stop() {
      await Promise.all([periodic.stop(), ...queues.map((queue) => queue.stop())]);
    },
  };
}
