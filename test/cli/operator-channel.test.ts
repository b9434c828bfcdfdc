import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { constants, existsSync, lstatSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forwardCommand, OperatorChannelError } from '../../src/cli/operator-channel/client.js';
import { notOwnedBy, socketPath } from '../../src/cli/operator-channel/protocol.js';
import { serveOperatorChannel } from '../../src/cli/operator-channel/server.js';
import { runCli } from '../../src/cli/run.js';
import type { Database } from '../../src/db/database.js';
import { BIN, type CliResult } from '../helpers/cli.js';
import { copyPgliteTemplate } from '../helpers/db.js';

/** Seconds on a quiet machine, a minute on a loaded one: awaited, never assumed. */
const READY_WITHIN_MS = 180_000;

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function scratchDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sibyl-channel-'));
  dirs.push(dir);
  return dir;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

const until = async (what: string, done: () => boolean | Promise<boolean>, output = () => '') => {
  const deadline = Date.now() + READY_WITHIN_MS;
  while (Date.now() < deadline) {
    if (await done()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not happen: ${output()}`);
};

/** `sibyl start` as a real process; answers once it is ready and serves its operator channel. */
async function startService(env: Record<string, string>) {
  const child = spawn(process.execPath, [BIN, 'start'], { env });
  children.push(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await until(
    'the start',
    async () => {
      if (child.exitCode !== null) throw new Error(`exited early: ${output}`);
      const ready = await fetch(`http://127.0.0.1:${env.PORT}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      return ready && existsSync(socketPath(env.SIBYL_DATA_DIR as string));
    },
    () => output,
  );
  return { child, exited, output: () => output };
}

/** The built `sibyl` as a user runs it, without waiting: several run at once. */
function sibyl(args: string[], env: Record<string, string>, cwd?: string): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, ...(cwd ? { cwd } : {}) });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/**
 * The same command run in this process (src/cli/run.ts, what `sibyl` runs): this process is not the
 * service either, so it finds the directory held and goes over the channel, or, the service stopped,
 * opens the database itself, as the real process does; a process start less (about a second of CPU
 * each). Each kind of case below keeps real processes too.
 */
async function inProcess(args: string[], env: Record<string, string>): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const status = await runCli(args, {
    env,
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  });
  return { status, stdout, stderr };
}

const parsed = (result: CliResult) => {
  expect(result.stdout.trim().split('\n'), result.stderr).toHaveLength(1);
  return JSON.parse(result.stdout) as Record<string, unknown>;
};

describe('operator commands while `sibyl start` runs on the embedded database', {
  timeout: 3 * READY_WITHIN_MS,
}, () => {
  const dataDir = copyPgliteTemplate();
  dirs.push(dataDir);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    SIBYL_DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
  };
  let service: Awaited<ReturnType<typeof startService>>;
  let accountId: string;
  let balanceUsd: string;
  const refusedRemotely: CliResult[] = [];

  beforeAll(async () => {
    env.PORT = String(await freePort());
    service = await startService(env);
  }, READY_WITHIN_MS + 10_000);

  it('serves a socket in the data directory that only this user can use (mode 0600)', () => {
    const socket = statSync(socketPath(dataDir));
    expect(socket.isSocket()).toBe(true);
    expect(socket.mode & 0o777).toBe(0o600);
    expect(socket.uid).toBe(process.getuid?.());
    expect(statSync(dataDir).uid).toBe(process.getuid?.());
  });

  it('runs commands from other processes at once, on the database the service holds', async () => {
    const created = await sibyl(['accounts', 'create', '--mode', 'sandbox', '--json'], env);
    expect(created.status, created.stderr).toBe(0);
    accountId = parsed(created).id as string;
    const shown = await sibyl(['accounts', 'show', accountId, '--json'], env);
    const before = parsed(shown).balanceUsd as string;

    // Processes and, beside them, the same commands from this process: all at once.
    const results = await Promise.all([
      sibyl(['accounts', 'adjust', accountId, '2.50', '--reason', 'correction 1', '--json'], env),
      ...[2, 3].map((n) =>
        inProcess(['accounts', 'adjust', accountId, '2.50', '--reason', `correction ${n}`, '--json'], env),
      ),
      sibyl(['keys', 'create', accountId, '--name', 'ops 1', '--json'], env),
      inProcess(['keys', 'create', accountId, '--name', 'ops 2', '--json'], env),
      sibyl(['accounts', 'list'], env),
    ]);
    for (const result of results) expect(result.status, result.stderr).toBe(0);
    const adjusted = results.slice(0, 3).map(parsed);
    expect(new Set(adjusted.map((a) => a.entryId)).size).toBe(3);
    expect(results[5]?.stdout).toContain(accountId);

    // The effect is the service's: the keys made over the channel work over HTTP at once, and the
    // balance the service answers has the three corrections.
    balanceUsd = (Number(before) + 7.5).toFixed(2);
    for (const result of results.slice(3, 5)) {
      const { key } = parsed(result) as { key: string };
      const account = await fetch(`http://127.0.0.1:${env.PORT}/api/v1/account`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(account.status).toBe(200);
      expect(await account.json()).toMatchObject({ id: accountId, balanceUsd });
    }
    const reconciled = await sibyl(['ledger', 'reconcile'], env);
    expect(reconciled).toMatchObject({ status: 0, stdout: 'Ledger reconciles\n' });
  });

  it("answers a command's error with exit 1 and the command line's own message", async () => {
    refusedRemotely.push(await sibyl(['accounts', 'show', 'acct_missing'], env));
    refusedRemotely.push(
      await inProcess(['accounts', 'adjust', accountId, '-1000.00', '--reason', 'x', '--json'], env),
    );
    expect(refusedRemotely[0]).toEqual({
      status: 1,
      stdout: '',
      stderr: 'sibyl: Account acct_missing does not exist\n',
    });
    expect(refusedRemotely[1]?.status).toBe(1);
    expect(parsed(refusedRemotely[1] as CliResult)).toMatchObject({ code: 'INSUFFICIENT_BALANCE' });
  });

  it('a service killed mid-command leaves the command line with a clear error, not a hang', async () => {
    // `markets ingest` of a named pipe: the service opens it for reading, and blocks there, when it
    // runs the command; the pipe's path is relative, read from the caller's directory.
    const here = scratchDir();
    execFileSync('mkfifo', [join(here, 'events.ndjson')]);
    const ingest = sibyl(['markets', 'ingest', 'events.ndjson'], env, here);
    let writer: Awaited<ReturnType<typeof open>> | undefined;
    await until('the service opening the pipe', async () => {
      writer = await open(join(here, 'events.ndjson'), constants.O_WRONLY | constants.O_NONBLOCK).catch(
        () => undefined,
      );
      return writer !== undefined;
    });
    service.child.kill('SIGKILL');
    await service.exited;
    const result = await ingest;
    await writer?.close();
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(
      /^sibyl: the running service stopped answering before the command finished \(.+\); whether it took effect is unknown/,
    );
    // The socket file outlived its process.
    expect(lstatSync(socketPath(dataDir)).isSocket()).toBe(true);
  });

  it('the next start replaces the stale socket and serves again; the database kept every change', async () => {
    service = await startService(env);
    const shown = await sibyl(['accounts', 'show', accountId, '--json'], env);
    expect(shown.status, shown.stderr).toBe(0);
    expect(parsed(shown)).toMatchObject({ id: accountId, balanceUsd });
  });

  it('stops on SIGTERM and removes its socket; the same command run locally answers the same', async () => {
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    expect(existsSync(socketPath(dataDir))).toBe(false);
    const local = [
      await sibyl(['accounts', 'show', 'acct_missing'], env),
      await inProcess(['accounts', 'adjust', accountId, '-1000.00', '--reason', 'x', '--json'], env),
    ];
    expect(local).toEqual(refusedRemotely);
  });
});

describe('the channel belongs to one user', () => {
  const uid = process.getuid?.() as number;

  it("refuses a directory or socket another user owns, on the service's side and the caller's", async () => {
    const dir = scratchDir();
    expect(notOwnedBy(dir, uid)).toBeNull();
    expect(notOwnedBy(dir, uid + 1)).toBe(`${dir} is owned by uid ${uid}, not by this user (uid ${uid + 1})`);

    // A service running as another user than the directory's owner serves nothing, and says why.
    const warnings: unknown[] = [];
    const channel = await serveOperatorChannel({
      dataDir: dir,
      db: {} as Database, // never reached: nothing is served
      env: {},
      log: { info() {}, error() {}, warn: (fields) => warnings.push(fields) },
      run: runCli,
      uid: uid + 1,
    });
    expect(channel).toBeNull();
    expect(warnings).toEqual([
      expect.objectContaining({ reason: expect.stringContaining(`owned by uid ${uid}`) }),
    ]);
    expect(existsSync(socketPath(dir))).toBe(false);
  });

  it('a caller refuses a socket it does not own, and removes one nobody listens on', async () => {
    const dir = scratchDir();
    const path = socketPath(dir);
    // A socket file left by a process killed while it listened.
    const killed = spawnSync(process.execPath, [
      '-e',
      `require('node:net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'))`,
    ]);
    expect(killed.signal).toBe('SIGKILL');
    expect(lstatSync(path).isSocket()).toBe(true);
    const io = { stdout() {}, stderr() {} };

    await expect(forwardCommand(dir, ['accounts', 'list'], io, uid + 1)).rejects.toThrow(
      new OperatorChannelError(
        `refusing the operator channel: ${dir} is owned by uid ${uid}, not by this user (uid ${uid + 1})`,
      ),
    );
    expect(existsSync(path)).toBe(true);

    // Nobody listens: no forwarding (the caller reports the directory in use), and the file goes.
    expect(await forwardCommand(dir, ['accounts', 'list'], io)).toBeNull();
    expect(existsSync(path)).toBe(false);
  });
});
