import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { DepositWiring } from '../deposits/index.js';
import type { Queue } from '../feature.js';
import { FEATURES } from '../features.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../logger.js';
import { createPorts, type PortOverrides, type Ports } from '../ports.js';
import { PeriodicRunner } from '../queue/periodic.js';
import { pruneOrder, type RetentionTable } from '../retention/index.js';

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

export interface Worker {
  /** The durable work queues, by name (tests drain them by hand with a manual clock). */
  queues: ReadonlyMap<string, Queue>;
  start(): Promise<void>;
  /** Stops claiming work and waits for what is in progress. */
  stop(): Promise<void>;
}

/**
 * Every room's pruned tables (their descriptors' `retention`) with their periods, in the order of a
 * run: each before the tables its rows name, the busiest first (`pruneOrder`, retention/order.ts).
 */
export async function prunedTables(config: Config): Promise<RetentionTable[]> {
  const tables = await Promise.all(FEATURES.map(async (feature) => (await feature.retention?.()) ?? []));
  return pruneOrder(tables.flat()).map((table) => ({
    name: table.name,
    prune: table.prune,
    keepMs: table.keepMs(config),
  }));
}

/**
 * The background process (`sibyl work`): every feature's periodic upkeep and durable work queues.
 * It walks the feature list; each feature builds its own (loading its worker's modules on demand).
 */
export async function createWorker(deps: WorkerDeps): Promise<Worker> {
  const { config, db, clock, log } = deps;
  const ports = deps.ports ?? (await createPorts(config, db, clock, deps));
  const handed = {
    config,
    db,
    clock,
    log,
    ports,
    deposits: deps.deposits,
    pruned: await prunedTables(config),
  };
  // Each feature's queues and tasks, in the list's order (src/features.ts).
  const parts = await Promise.all(FEATURES.map((feature) => feature.worker?.(handed)));
  const periodic = new PeriodicRunner(
    parts.flatMap((part) => part?.tasks ?? []),
    { clock, log },
  );
  const queues: Queue[] = parts.flatMap((part) => part?.queues ?? []);
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
