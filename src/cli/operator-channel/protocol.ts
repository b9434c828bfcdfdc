import { type Stats, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * The operator channel (docs/operations.md#operator-commands-while-the-service-runs): a Unix domain
 * socket in the embedded database's data directory, through which `sibyl <command>` asks the
 * running `sibyl start` to run the command on the database it holds.
 *
 * One request line, then answer lines, each a JSON object ending in `\n`:
 *   → {"argv": ["keys", "create", "acc_…"], "cwd": "/home/me/project"}
 *   ← {"out": "text for stdout"} | {"err": "text for stderr"} …, then {"exit": 0}
 */
export interface ChannelRequest {
  argv: string[];
  /** The caller's working directory: relative paths in its arguments are read from there. */
  cwd: string;
}

export type ChannelAnswer = { out: string } | { err: string } | { exit: number };

/** The socket's name in the data directory. */
export const SOCKET_NAME = 'sibyl.sock';

/** A request line longer than this is refused (an argv, not a payload). */
export const MAX_REQUEST_BYTES = 64 * 1024;

/** Linux's limit for a socket path (`sun_path`, 108 bytes with its terminating NUL). */
export const MAX_SOCKET_PATH_BYTES = 107;

export function socketPath(dataDir: string): string {
  return join(resolve(dataDir), SOCKET_NAME);
}

/** The user this process runs as; undefined where there are no Unix users (Windows). */
export function currentUid(): number | undefined {
  return typeof process.getuid === 'function' ? process.getuid() : undefined;
}

/**
 * Why `path` may not carry the operator channel for user `uid`, or null when it may: it must be
 * owned by that user (a socket in a directory someone else owns could be replaced by theirs).
 */
export function notOwnedBy(path: string, uid: number, stats: Stats = statSync(path)): string | null {
  return stats.uid === uid ? null : `${path} is owned by uid ${stats.uid}, not by this user (uid ${uid})`;
}

/** The request line's JSON, checked; null when it is not a request. */
export function parseRequest(line: string): ChannelRequest | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { argv, cwd } = value as Record<string, unknown>;
  if (!Array.isArray(argv) || !argv.every((arg) => typeof arg === 'string')) return null;
  if (typeof cwd !== 'string' || cwd === '') return null;
  return { argv, cwd };
}
