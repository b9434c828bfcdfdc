import { chmodSync, lstatSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';
import type { Database } from '../../db/database.js';
import type { Log } from '../../logger.js';
import type { CliIo } from '../run.js';
import {
  type ChannelAnswer,
  type ChannelRequest,
  currentUid,
  MAX_REQUEST_BYTES,
  MAX_SOCKET_PATH_BYTES,
  notOwnedBy,
  parseRequest,
  socketPath,
} from './protocol.js';

/** Commands run at once over the channel (the embedded database runs one query at a time anyway). */
export const MAX_RUNNING = 4;
/** Commands waiting for their turn; one more is refused (exit 1, "busy"). */
export const MAX_WAITING = 32;

/** A connection that has not sent its request line by then is closed. */
const REQUEST_WITHIN_MS = 10_000;

export interface OperatorChannelOptions {
  dataDir: string;
  /** The database the service holds: every command runs on it. */
  db: Database;
  /** The service's own environment: commands run with its settings. */
  env: Record<string, string | undefined>;
  log: Log;
  /** Runs one command line (`runCli`). */
  run(argv: string[], io: CliIo): Promise<number>;
  /** The user who may use the channel; default: the one this process runs as. */
  uid?: number;
}

export interface OperatorChannel {
  path: string;
  /** Stops accepting; a command that runs until stopped stops, the others finish first. */
  close(): Promise<void>;
}

/**
 * Serves operator commands on a socket only this OS user can reach: mode 0600, in a data
 * directory this user owns (else nothing is served and the reason is logged). A socket file left
 * by a process that died is removed first: the caller holds the data directory's lock, so no other
 * live process serves it. Answers null when nothing is served.
 */
export async function serveOperatorChannel(options: OperatorChannelOptions): Promise<OperatorChannel | null> {
  const path = socketPath(options.dataDir);
  const uid = options.uid ?? currentUid();
  if (uid === undefined) return null; // no Unix users, no Unix sockets (Windows)
  const refused = (reason: string) => {
    options.log.warn(
      { path, reason },
      'operator channel not served: operator commands need the service stopped',
    );
    return null;
  };
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES)
    return refused(`the socket path is longer than ${MAX_SOCKET_PATH_BYTES} bytes`);
  const notOwned = notOwnedBy(dirname(path), uid);
  if (notOwned) return refused(notOwned);
  const stale = removeStaleSocket(path);
  if (stale) return refused(stale);

  const state: ChannelState = { running: 0, waiting: [], stopping: new AbortController() };
  const serving = new Set<Promise<void>>();
  const server = createServer((socket) => {
    socket.on('error', () => {}); // a caller that went away: its command's output is dropped
    const one = serveOne(socket, options, state).catch((err: unknown) => {
      options.log.error({ err }, 'operator channel: a command failed');
      socket.destroy();
    });
    serving.add(one);
    void one.finally(() => serving.delete(one));
  });
  await listenPrivately(server, path);
  return {
    path,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      state.stopping.abort();
      await Promise.all(serving);
      await closed;
    },
  };
}

interface ChannelState {
  running: number;
  /** Commands waiting for a turn, first come first served. */
  waiting: (() => void)[];
  /** Aborted when the channel closes. */
  stopping: AbortController;
}

/** Why an existing file at `path` cannot be replaced, or null (absent, or a socket now removed). */
function removeStaleSocket(path: string): string | null {
  let stats: ReturnType<typeof lstatSync>;
  try {
    stats = lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  if (!stats.isSocket()) return `${path} exists and is not a socket`;
  rmSync(path, { force: true });
  return null;
}

/**
 * Listens on `path` created with mode 0600: the umask applies when the socket file is made (so no
 * other user can connect in between), and the mode is set again in case the file system ignores it.
 */
async function listenPrivately(server: Server, path: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    const previous = process.umask(0o177);
    try {
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    } finally {
      process.umask(previous);
    }
  });
  chmodSync(path, 0o600);
}

function answer(socket: Socket, message: ChannelAnswer): void {
  if (socket.writable) socket.write(`${JSON.stringify(message)}\n`);
}

/** An error as the command line prints it (`--json`: one object on stdout), and its exit code. */
function refuse(socket: Socket, request: Pick<ChannelRequest, 'argv'>, message: string, code: number): void {
  answer(
    socket,
    request.argv.includes('--json')
      ? { out: `${JSON.stringify({ error: message, code: 'ERROR' })}\n` }
      : { err: `sibyl: ${message}\n` },
  );
  answer(socket, { exit: code });
  socket.end();
}

/** Reads one request line, waits for a turn, runs the command, streams its output and exit code. */
async function serveOne(socket: Socket, options: OperatorChannelOptions, state: ChannelState): Promise<void> {
  const line = await requestLine(socket, state.stopping.signal);
  if (line === null) {
    socket.destroy();
    return;
  }
  socket.resume(); // nothing follows the request, but the caller's end must be seen
  const request = parseRequest(line);
  if (!request)
    return refuse(socket, { argv: [] }, 'the operator channel got a request it does not understand', 2);
  if (state.running >= MAX_RUNNING) {
    if (state.waiting.length >= MAX_WAITING)
      return refuse(
        socket,
        request,
        `the running service is busy with ${MAX_RUNNING + MAX_WAITING} operator commands; try again`,
        1,
      );
    await new Promise<void>((resolve) => state.waiting.push(resolve));
  }
  state.running += 1;
  try {
    await runOne(socket, request, options, state.stopping.signal);
  } finally {
    state.running -= 1;
    state.waiting.shift()?.();
  }
}

async function runOne(
  socket: Socket,
  request: ChannelRequest,
  options: OperatorChannelOptions,
  stopping: AbortSignal,
): Promise<void> {
  if (socket.destroyed) return; // the caller left while it waited
  // The caller gone (interrupted, killed) or the service stopping: a command that runs until
  // stopped (`webhooks listen`) stops.
  const stop = new AbortController();
  socket.on('close', () => stop.abort());
  const onStopping = () => stop.abort();
  stopping.addEventListener('abort', onStopping, { once: true });
  const [command, action] = request.argv.filter((arg) => !arg.startsWith('-'));
  options.log.info({ command, action }, 'operator command');
  try {
    const code = await options.run(request.argv, {
      env: options.env,
      cwd: request.cwd,
      database: options.db,
      signal: stop.signal,
      stdout: (text) => answer(socket, { out: text }),
      stderr: (text) => answer(socket, { err: text }),
    });
    options.log.info({ command, action, exitCode: code }, 'operator command done');
    answer(socket, { exit: code });
    socket.end();
  } finally {
    stopping.removeEventListener('abort', onStopping);
  }
}

function requestLine(socket: Socket, stopping: AbortSignal): Promise<string | null> {
  if (stopping.aborted) return Promise.resolve(null);
  return new Promise((resolve) => {
    let received = '';
    const finish = (line: string | null) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('end', onEnd);
      stopping.removeEventListener('abort', onEnd);
      resolve(line);
    };
    const onData = (chunk: string) => {
      received += chunk;
      const end = received.indexOf('\n');
      if (end >= 0) finish(received.slice(0, end));
      else if (Buffer.byteLength(received) > MAX_REQUEST_BYTES) finish(null);
    };
    const onEnd = () => finish(null);
    const timer = setTimeout(onEnd, REQUEST_WITHIN_MS);
    socket.setEncoding('utf8');
    socket.on('data', onData);
    socket.on('end', onEnd);
    stopping.addEventListener('abort', onEnd);
  });
}
