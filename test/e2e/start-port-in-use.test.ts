import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { scratchFolder } from '../helpers/db.js';
import { freePort, startService } from '../helpers/process.js';

// Its own file beside test/e2e/start.test.ts: each pays for a first start of the real process, and
// two files run side by side (docs/testing.md#where-the-time-goes).

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A first start initialises, migrates and fills a PGlite directory: seconds on a quiet machine, a minute on a loaded one. */
const READY_WITHIN_MS = 180_000;

/**
 * A first start whose port is taken fails in one line and hands out nothing; the key is not lost:
 * the start after it, on the same directory, prints the sandbox key.
 */
describe('a first start on a port in use', { timeout: 2 * READY_WITHIN_MS + 60_000 }, () => {
  it('says "set PORT" without a stack trace, and the next start prints the starter key', async () => {
    const dataDir = join(scratchFolder('sibyl-e2e-'), 'data');
    dirs.push(dirname(dataDir));
    const port = await freePort();
    const squatter: Server = createServer();
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
    const env = {
      PATH: process.env.PATH ?? '',
      SIBYL_DATA_DIR: dataDir,
      PORT: String(port),
      LOG_LEVEL: 'warn',
    };

    const failed = spawn(process.execPath, [BIN, 'start'], { env });
    children.push(failed);
    let stdout = '';
    let stderr = '';
    failed.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    failed.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => failed.on('exit', (c) => resolve(c)));
    expect(code).toBe(1);
    expect(stderr).toBe(
      `sibyl: 127.0.0.1:${port} is already in use (another Sibyl, or another program): set PORT to a free port, e.g. PORT=${port + 1}\n`,
    );
    expect(stdout).not.toContain('API key');
    await new Promise<void>((resolve) => squatter.close(() => resolve()));

    const second = await startService(
      'start',
      { SIBYL_DATA_DIR: dataDir, PORT: String(port) },
      async (output) => output.includes('OpenAPI '),
      READY_WITHIN_MS,
    );
    children.push(second.child);
    const output = second.output();
    const key = /API key\s+(pk_test_[0-9A-Za-z]{38})/.exec(output)?.[1];
    expect(key, output).toBeDefined();
    const account = await fetch(`http://127.0.0.1:${port}/api/v1/account`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(account.status).toBe(200);
    expect(await account.json()).toMatchObject({ mode: 'sandbox', balanceUsd: '100.00' });
    await new Promise<number | null>((resolve) => {
      second.child.on('exit', (c) => resolve(c));
      second.child.kill('SIGTERM');
    });
  });
});
