import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { BIN } from './cli.js';

export function freePort(): Promise<number> {
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

export interface ServiceProcess {
  child: ChildProcess;
  /** Everything the process wrote so far. */
  output(): string;
  /** SIGKILL: no shutdown, no flush, as a crash or an OOM kill would. */
  kill(): Promise<void>;
}

/**
 * Starts the built `sibyl <role>` as a separate process with only the given environment, and waits
 * until `ready(output)` says it is up (or it exits); `output` is everything it wrote so far. The
 * deadline only turns a hang into a failure: 45 s for a start on a migrated database, more for a
 * first start, which initialises and fills its directory.
 */
export async function startService(
  role: 'start' | 'serve' | 'work',
  env: Record<string, string>,
  ready: (output: string) => Promise<boolean>,
  readyWithinMs = 45_000,
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [BIN, role], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const service: ServiceProcess = {
    child,
    output: () => output,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  const deadline = Date.now() + readyWithinMs;
  while (Date.now() < deadline) {
    if (await ready(output).catch(() => false)) return service;
    if (child.exitCode !== null) throw new Error(`sibyl ${role} exited early: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await service.kill();
  throw new Error(`sibyl ${role} did not become ready: ${output}`);
}

/** Ready when `GET {base}/readyz` answers 200. */
export function httpReady(base: string): () => Promise<boolean> {
  return () => fetch(`${base}/readyz`).then((r) => r.ok);
}
