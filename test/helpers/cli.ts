import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runCli as runCommand } from '../../src/cli/run.js';
import type { Database } from '../../src/db/database.js';

export const BIN = fileURLToPath(new URL('../../bin/sibyl.js', import.meta.url));

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built `sibyl` command as a user would, with only the given environment. */
export function runCli(args: string[], env: Record<string, string>): CliResult {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The environment pointing the CLI at a test database (PostgreSQL URL or PGlite directory). */
export function databaseEnv(location: string): Record<string, string> {
  return location.startsWith('postgres') ? { DATABASE_URL: location } : { SIBYL_DATA_DIR: location };
}

/**
 * Runs a command in this process, on a database the test holds open: the same code as the
 * process, its output and exit code, without a process start and an embedded database opening
 * (seconds each on a loaded machine) per command. A few cases per file still run the real process.
 */
export async function runCliOn(
  db: Database,
  args: string[],
  env: Record<string, string>,
): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const status = await runCommand(args, {
    env: { LOG_LEVEL: 'silent', ...env },
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    database: db,
  });
  return { status, stdout, stderr };
}
