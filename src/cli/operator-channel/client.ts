import { lstatSync, rmSync, type Stats } from 'node:fs';
import { connect } from 'node:net';
import { dirname } from 'node:path';
import { currentUid, notOwnedBy, socketPath } from './protocol.js';

/** The running service could not run the command, or stopped answering while it ran. */
export class OperatorChannelError extends Error {
  override name = 'OperatorChannelError';
}

export interface ForwardIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

/**
 * Runs `argv` in the service that holds the embedded database in `dataDir`, through its operator
 * channel, and answers the command's exit code, its output streamed to `io` as it comes. Answers
 * null when that process serves no channel (an older version, a command line, a start still
 * opening the database): the caller reports the data directory as in use. A socket no process
 * listens on is removed. `uid`: the user the channel must belong to (default: this process's).
 */
export async function forwardCommand(
  dataDir: string,
  argv: string[],
  io: ForwardIo,
  uid: number | undefined = currentUid(),
): Promise<number | null> {
  const path = socketPath(dataDir);
  if (uid === undefined) return null;
  let stats: Stats;
  try {
    stats = lstatSync(path);
  } catch {
    return null;
  }
  if (!stats.isSocket()) return null;
  // Not ours: the answer could be anyone's. Refused, not followed.
  const notOwned = notOwnedBy(dirname(path), uid) ?? notOwnedBy(path, uid, stats);
  if (notOwned) throw new OperatorChannelError(`refusing the operator channel: ${notOwned}`);

  return new Promise<number | null>((resolve, reject) => {
    const socket = connect(path);
    let received = '';
    let connected = false;
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      outcome();
    };
    socket.setEncoding('utf8');
    socket.on('connect', () => {
      connected = true;
      socket.write(`${JSON.stringify({ argv, cwd: process.cwd() })}\n`);
    });
    socket.on('data', (chunk: string) => {
      received += chunk;
      for (let end = received.indexOf('\n'); end >= 0; end = received.indexOf('\n')) {
        const line = received.slice(0, end);
        received = received.slice(end + 1);
        let message: { out?: unknown; err?: unknown; exit?: unknown };
        try {
          message = JSON.parse(line) as typeof message;
        } catch {
          settle(() => reject(lost('an answer it could not read')));
          return;
        }
        if (typeof message.out === 'string') io.stdout(message.out);
        if (typeof message.err === 'string') io.stderr(message.err);
        if (typeof message.exit === 'number') {
          const code = message.exit;
          settle(() => resolve(code));
          return;
        }
      }
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (!connected && (err.code === 'ECONNREFUSED' || err.code === 'ENOENT')) {
        // Nobody listens: the file outlived its process (removed unless a new one replaced it).
        settle(() => {
          if (sameFile(path, stats)) rmSync(path, { force: true });
          resolve(null);
        });
        return;
      }
      settle(() => reject(lost(err.message)));
    });
    socket.on('close', () => settle(() => reject(lost('the connection closed'))));
  });
}

function sameFile(path: string, seen: Stats): boolean {
  try {
    const now = lstatSync(path);
    return now.ino === seen.ino && now.dev === seen.dev;
  } catch {
    return false;
  }
}

function lost(how: string): OperatorChannelError {
  return new OperatorChannelError(
    `the running service stopped answering before the command finished (${how}); ` +
      'whether it took effect is unknown: check (e.g. `list`, `show`) before running it again',
  );
}
