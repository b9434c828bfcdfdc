import type { Database } from '../db/database.js';

/** Where a command reads its settings and writes its answer: the process, or a test. */
export interface CliIo {
  env: Record<string, string | undefined>;
  stdout(text: string): void;
  stderr(text: string): void;
  /**
   * An open database to use instead of opening the configured one (and left open): the tests run
   * many commands on one embedded database, which takes seconds to open in a new process.
   */
  database?: Database;
  /** Ends a command that runs until a signal (`webhooks listen`): tests, the operator channel. */
  signal?: AbortSignal;
  /** Where relative paths in the arguments are read from; default: this process's directory. */
  cwd?: string;
  /** Stdout is a terminal: a long-running command may redraw what it printed (`stream prices`). */
  terminal?: boolean;
}
