import type { TProperties } from 'typebox';
import type { Database } from './db/database.js';
import type { PruneStatement } from './db/prune.js';
import type { RegisterRoutes } from './http/feature-routes.js';
import type { Clock } from './lib/clock.js';
import type { CommandArgs, Output } from './lib/command-line.js';
import type { Settings } from './lib/settings.js';
import type { Log } from './logger.js';
import type { PeriodicTask } from './queue/periodic.js';
import type { WorkQueue } from './queue/queue.js';

/** Settings fragments by the key their parsed settings get in `Config` (`{ jobs: jobSettings }`). */
export type SettingsFragments = Record<string, Settings<TProperties, unknown>>;

/** What every part of every room is handed: the process's database, clock and log. */
export interface BaseDeps {
  db: Database;
  clock: Clock;
  log: Log;
}

/**
 * What a room's parts read of the process beyond `BaseDeps`, as the room states it: the slices of
 * `Config` (`config: { jobs: JobSettings }`), the ports (`ports: { prices: PriceService }`), the
 * edge's services (`edge`, the API part only) and what else the worker hands in. The composition
 * roots hand the whole process, which the compiler checks against every room's statement; a room
 * names no composition root, so its descriptor sits below them (no import cycle through `Config`).
 */
export interface Needs {
  config?: object;
  ports?: object;
  /** The API part only. */
  edge?: object;
}

/** What a room's API part is handed: the process's, its configuration, ports and the edge's services. */
export type ApiDeps<N extends object> = BaseDeps & Pick<N, Extract<keyof N, keyof Needs>>;

/** What a room's worker part is handed: all it states but the edge (`deposits`, `pruned`: the worker's own). */
export type WorkDeps<N extends object> = BaseDeps & Omit<N, 'edge'>;

/** A durable work queue as the worker runs it. */
export type Queue = Pick<WorkQueue<unknown>, 'name' | 'start' | 'stop' | 'drain'>;

/** A feature's background work: its durable queues and its periodic upkeep. */
export interface WorkParts {
  queues?: Queue[];
  tasks?: PeriodicTask[];
}

/** What an operator command is run with: the configuration, its output, and what it opens on demand. */
export interface CommandIo<C = unknown> {
  config: C;
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
  /** Stdout is a terminal: a long-running command may redraw its lines (ANSI) instead of adding more. */
  terminal?: boolean;
}

/** One `sibyl <name> <action>` command of a feature. */
export interface Command<C = unknown> {
  /** Its lines of the usage text, as printed (continuation lines included). */
  usage: string[];
  /** Runs `action` (loading its implementation with `import()`); false: something was refused (exit 1). */
  run(io: CommandIo<C>, action: string, args: CommandArgs): Promise<boolean | undefined>;
}

/**
 * One table (or one kind of row in it) that retention prunes: rows that ended more than `keepMs`
 * ago go, at most a batch per statement (docs/architecture.md#durable-work).
 */
export interface PrunedTable<C = unknown> {
  /** For logs and the run's report. */
  name: string;
  /**
   * A batched delete built by `pruneStatement` (`db/prune.ts`) next to the feature's SQL: `$1` the
   * cutoff, `$2` the most rows one statement deletes; returns one row `{ deleted }`. It names its
   * table and the tables it deletes with it (their foreign keys point at it).
   */
  prune: PruneStatement;
  /**
   * Other pruned tables whose rows this one's rows name (by a foreign key, or by an id column such as
   * a callback's `request_id`): this table is pruned before them in a run, so that no kept row is left
   * naming a pruned one (docs/operations.md#retention).
   */
  refersTo?: readonly string[];
  /** A table that grows fastest: pruned before the others it need not wait for, so a run stopped midway has pruned it. */
  busy?: boolean;
  /** How long a row is kept after it ended: a retention setting (`config.retention`) or a fixed contract. */
  keepMs(config: C): number;
}

type ConfigOf<N extends object> = N extends { config: infer C } ? C : unknown;

/**
 * What a room offers the house (`src/<feature>/feature.ts`): the composition roots (`app.ts`,
 * `worker/worker.ts`, `cli/run.ts`, `config.ts`) walk the list of these in `src/features.ts` and
 * know no feature by name. `S` is its settings fragments; `N` what its parts read (see `Needs`).
 * Its routes, worker parts and commands are loaded with `import()` when they are used, so that
 * the list costs a command only its settings and usage lines.
 */
export interface Feature<S extends SettingsFragments = Record<never, never>, N extends object = Needs> {
  name: string;
  /**
   * The tables it owns (docs/architecture.md#one-owner-per-table): every table the migrations
   * create has one owner, and only the owner's SQL names it, but the uses named with their reason in
   * the architecture test. Read by that test; nothing runs on it.
   */
  tables?: readonly string[];
  /** Its settings fragments, by their key in `Config`. */
  settings?: S;
  /** Registers its routes (in list order: that order is the OpenAPI document's). */
  api?: RegisterRoutes<ApiDeps<N>>;
  /**
   * What the room adds to the OpenAPI document beyond its routes: the requests the service makes
   * (OpenAPI 3.1 `webhooks`) and the named schemas they use. Loaded when the API starts.
   */
  openApi?(): Promise<{ webhooks: Record<string, unknown>; schemas: Record<string, unknown> }>;
  /** Its durable queues and periodic tasks. */
  worker?(deps: WorkDeps<N>): Promise<WorkParts>;
  /** Its operator commands, by name. */
  commands?: Record<string, Command<ConfigOf<N>>>;
  /** Its tables that retention prunes (loaded by the worker, which hands them to the retention task). */
  retention?(): Promise<PrunedTable<ConfigOf<N>>[]>;
}
