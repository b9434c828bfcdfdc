import type { TProperties } from 'typebox';
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import type { DepositWiring } from './deposits/index.js';
import type { RegisterRoutes } from './http/feature-routes.js';
import type { Clock } from './lib/clock.js';
import type { CommandArgs, Output } from './lib/command-line.js';
import type { Settings } from './lib/settings.js';
import type { Log } from './logger.js';
import type { Ports } from './ports.js';
import type { PeriodicTask } from './queue/periodic.js';
import type { WorkQueue } from './queue/queue.js';

/** Settings fragments by the key their parsed settings get in `Config` (`{ jobs: jobSettings }`). */
export type SettingsFragments = Record<string, Settings<TProperties, unknown>>;

/** What a feature's worker part is built from: as the API's, with the deposit watcher's test doubles. */
export interface WorkDeps {
  config: Config;
  db: Database;
  clock: Clock;
  log: Log;
  ports: Ports;
  /** Deposits: the prices at block time and the chain; default: the price services and SOLANA_RPC_URL. */
  deposits?: Pick<DepositWiring, 'prices' | 'rpc'>;
}

/** A durable work queue as the worker runs it. */
export type Queue = Pick<WorkQueue<unknown>, 'name' | 'start' | 'stop' | 'drain'>;

/** A feature's background work: its durable queues and its periodic upkeep. */
export interface WorkParts {
  queues?: Queue[];
  tasks?: PeriodicTask[];
}

/** What an operator command is run with: the configuration, its output, and what it opens on demand. */
export interface CommandIo {
  config: Config;
  out: Output;
  env: Record<string, string | undefined>;
  /**
   * Where relative paths in the arguments are read from: the caller's directory, also when the
   * running service runs the command for it (docs/operations.md#operator-commands-while-the-service-runs).
   */
  cwd: string;
  /** The database, opened (and migrated) on the first call; the command line closes it. */
  database(): Promise<Database>;
  /** Ends a command that runs until a signal (`webhooks listen`): tests abort it. */
  signal?: AbortSignal;
  /** Where a long-running command prints its lines as they come. */
  print(line: string): void;
}

/** One `sibyl <name> <action>` command of a feature. */
export interface Command {
  /** Its lines of the usage text, as printed (continuation lines included). */
  usage: string[];
  /** Runs `action`; false: the work was done but something was refused (exit 1). */
  run(io: CommandIo, action: string, args: CommandArgs): Promise<boolean | undefined>;
}

/**
 * What a room offers the house: the composition roots (`app.ts`, `worker/worker.ts`, `cli/run.ts`,
 * `config.ts`) walk the list of these in `src/features.ts` and know no feature by name. The API part
 * loads its route files on demand, so that an operator command does not pay for them.
 */
export interface Feature<S extends SettingsFragments = Record<never, never>> {
  name: string;
  /** Its settings fragments, by their key in `Config`. */
  settings?: S;
  /** Registers its routes (in list order: that order is the OpenAPI document's). */
  api?: RegisterRoutes;
  /** Its durable queues and periodic tasks. */
  worker?(deps: WorkDeps): WorkParts;
  /** Its operator commands, by name. */
  commands?: Record<string, Command>;
}
