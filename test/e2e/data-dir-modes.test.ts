import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, lstatSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { scratchFolder } from '../helpers/db.js';
import { freePort, httpReady } from '../helpers/process.js';

/** A first start initialises a PGlite directory: seconds on a quiet machine, a minute on a loaded one. */
const READY_WITHIN_MS = 180_000;

const roots: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** Every entry under `dir` (itself included) with its permission bits, as `0700 d path`. */
function modes(dir: string): string[] {
  const found: string[] = [];
  const visit = (path: string) => {
    const stat = lstatSync(path, { throwIfNoEntry: false });
    if (!stat) return;
    const kind = stat.isDirectory() ? 'd' : stat.isFile() ? 'f' : stat.isSocket() ? 's' : 'o';
    found.push(`${(stat.mode & 0o777).toString(8).padStart(4, '0')} ${kind} ${path}`);
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(dir);
  return found;
}

/** The entries whose mode is not the owner's only: folders 0700, files and the socket 0600. */
function notPrivate(dir: string): string[] {
  return modes(dir).filter((line) => !/^(0700 d|0600 [fs]) /.test(line));
}

/** `sibyl start` as a real process under umask 022, as a shell started by a default login has it. */
async function start(env: Record<string, string>, port: number) {
  const child = spawn('/bin/sh', ['-c', 'umask 022 && exec "$0" "$@"', process.execPath, BIN, 'start'], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env, PORT: String(port) },
  });
  children.push(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const ready = httpReady(`http://127.0.0.1:${port}`);
  const deadline = Date.now() + READY_WITHIN_MS;
  // The banner comes last, once everything listens (readiness may answer just before it).
  while (!((await ready().catch(() => false)) && output.includes('OpenAPI '))) {
    if (child.exitCode !== null) throw new Error(`exited early: ${output}`);
    if (Date.now() > deadline) throw new Error(`never became ready: ${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const stop = () =>
    new Promise<number | null>((resolve) => {
      child.on('exit', (code) => resolve(code));
      child.kill('SIGTERM');
    });
  return { output: () => output, stop };
}

describe('the embedded data directory is its owner’s only', { timeout: 2 * READY_WITHIN_MS + 60_000 }, () => {
  it('a first start under umask 022 makes every folder 0700 and every file 0600; a loosened one is tightened and said so', async () => {
    const root = scratchFolder('sibyl-modes-');
    roots.push(root);
    const dataDir = join(root, 'data');
    const env = { SIBYL_DATA_DIR: dataDir };
    const port = await freePort();

    const first = await start(env, port);
    // While it runs: the database's 1,000-odd files, the lock, the attestation key, the socket.
    expect(modes(dataDir).length).toBeGreaterThan(1000);
    expect(notPrivate(dataDir)).toEqual([]);
    expect(first.output()).not.toContain('open to other users');
    expect(await first.stop()).toBe(0);
    expect(notPrivate(dataDir)).toEqual([]);

    // As an older version left it: folders 0755, files 0666.
    let loosened = 0;
    for (const line of modes(dataDir)) {
      const [, kind, path] = line.split(' ') as [string, string, string];
      chmodSync(path, kind === 'd' ? 0o755 : 0o666);
      loosened += 1;
    }
    const second = await start(env, port);
    expect(notPrivate(dataDir)).toEqual([]);
    expect(second.output()).toContain(
      `The data directory was open to other users: ${loosened} files and folders in it are now`,
    );
    expect(second.output()).toContain(
      'the data directory was open to other users: made private (folders 0700, files 0600)',
    );
    expect(await second.stop()).toBe(0);
    expect(notPrivate(dataDir)).toEqual([]);
  });
});
