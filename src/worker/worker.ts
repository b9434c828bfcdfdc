import type { CallbackOutbox } from '../ai/callback-port.js';
import { createAiQueue } from '../ai/queue.js';
import { createResolver } from '../ai/resolver.js';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { idempotencyTasks } from '../idempotency/tasks.js';
import { keyTasks } from '../keys/tasks.js';
import { ledgerTasks } from '../ledger/tasks.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../logger.js';
import { PeriodicRunner } from './periodic.js';
import type { WorkQueue } from './queue.js';

export interface WorkerDeps {
  config: Config;
  db: Database;
  clock: Clock;
  log: Log;
  /** The webhook outbox that results' callbacks are written to, in the result's transaction. */
  callbacks: CallbackOutbox;
}

export interface Worker {
  start(): Promise<void>;
  /** Stops claiming work and waits for what is in progress. */
  stop(): Promise<void>;
}

/**
 * The background process (`sibyl work`): every feature's periodic upkeep and durable work queues.
 * This file only lists them; each feature builds its own.
 */
export function createWorker(deps: WorkerDeps): Worker {
  const { config, db, clock, log, callbacks } = deps;
  const periodic = new PeriodicRunner(
    [...ledgerTasks({ db, log, config: config.ledger }), ...keyTasks({ db }), ...idempotencyTasks({ db })],
    { clock, log },
  );
  const resolver = createResolver(config.ai, clock);
  const queues: Pick<WorkQueue<unknown>, 'start' | 'stop'>[] = [
    createAiQueue({ db, clock, log, resolver, callbacks, config: config.ai }),
  ];
  return {
    async start() {
      periodic.start();
      for (const queue of queues) await queue.start();
    },
    async stop() {
      await Promise.all([periodic.stop(), ...queues.map((queue) => queue.stop())]);
    },
  };
}
