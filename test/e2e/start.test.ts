import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { scratchFolder } from '../helpers/db.js';
import { freePort } from '../helpers/process.js';

/** The addresses every start on the embedded database prints (src/start-banner.ts). */
function addressLines(port: number): string {
  const base = `http://127.0.0.1:${port}`;
  return [
    `  API            ${base}/api/v1`,
    `  Dashboard      ${base}/dashboard/  (sign in with a Solana wallet)`,
    `  API reference  ${base}/docs`,
    `  OpenAPI        ${base}/api/v1/openapi.json`,
  ].join('\n');
}

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  // A process still running (a failed case) is stopped before its data directory goes.
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/**
 * A first start initialises a PGlite directory, migrates it and loads the demo markets: seconds on
 * a quiet machine, a minute on a loaded one. Readiness is awaited, never assumed after a time; the
 * deadline only turns a hang into a failure.
 */
const READY_WITHIN_MS = 180_000;

/**
 * The quick start, end to end: a fresh data directory, the real process, real HTTP. First start
 * prints a sandbox key with 100.00 USD and loads the demo markets; that key works; SIGTERM stops the process cleanly; a second
 * start on the same directory reuses it and prints no new key.
 */
describe('sibyl start on a brand-new embedded database', { timeout: 2 * READY_WITHIN_MS + 60_000 }, () => {
  it('prints a working sandbox key, serves over HTTP, and shuts down on SIGTERM', async () => {
    const dataDir = join(scratchFolder('sibyl-e2e-'), 'data');
    dirs.push(dirname(dataDir));
    const port = await freePort();
    const env = {
      PATH: process.env.PATH ?? '',
      SIBYL_DATA_DIR: dataDir,
      PORT: String(port),
      LOG_LEVEL: 'warn',
    };

    const start = async (): Promise<{ child: ChildProcess; output: () => string }> => {
      const child = spawn(process.execPath, [BIN, 'start'], { env });
      children.push(child);
      let output = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      child.stderr?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      const deadline = Date.now() + READY_WITHIN_MS;
      while (Date.now() < deadline) {
        const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
          (r) => r.ok,
          () => false,
        );
        if (ready) return { child, output: () => output };
        if (child.exitCode !== null) throw new Error(`exited early: ${output}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`never became ready: ${output}`);
    };
    const stop = (child: ChildProcess) =>
      new Promise<number | null>((resolve) => {
        child.on('exit', (code) => resolve(code));
        child.kill('SIGTERM');
      });

    const first = await start();
    // The banner's last line, whenever it comes.
    while (!first.output().includes('OpenAPI ') && first.child.exitCode === null)
      await new Promise((r) => setTimeout(r, 50));
    const key = /API key\s+(pk_test_[0-9A-Za-z]{38})/.exec(first.output())?.[1];
    expect(key, first.output()).toBeDefined();
    expect(first.output()).toContain('100.00 USD');
    expect(first.output()).toContain(
      `curl -H "Authorization: Bearer ${key}" http://127.0.0.1:${port}/api/v1/account`,
    );
    expect(first.output()).toContain(addressLines(port));
    expect(first.output()).toContain('turned on by this first start of the embedded database');
    // The banner prints both attestation keys it publishes, each named (the starter key's answers are
    // signed by the sandbox one); the secret key file's content never.
    const published = await fetch(`http://127.0.0.1:${port}/api/v1/attestation/keys`);
    const { live, sandbox } = (await published.json()) as { live: string; sandbox: string };
    expect(first.output()).toContain(
      `  Attestations   live     ${live}  (signs live accounts' answers)\n` +
        `                 sandbox  ${sandbox}  (signs sandbox accounts' answers)\n`,
    );
    expect(first.output()).not.toContain(
      readFileSync(join(dataDir, 'attestation-secret-key'), 'utf8').trim(),
    );

    const account = await fetch(`http://127.0.0.1:${port}/api/v1/account`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(account.status).toBe(200);
    expect(await account.json()).toMatchObject({ mode: 'sandbox', balanceUsd: '100.00' });
    // The brand-new directory also got the sandbox demo markets.
    expect(first.output()).toContain('sandbox demo markets');
    const markets = await fetch(`http://127.0.0.1:${port}/api/v1/markets?status=OPEN&pageSize=5`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(markets.status).toBe(200);
    const list = (await markets.json()) as { total: number; markets: unknown[] };
    expect(list.total).toBeGreaterThan(10);
    expect(list.markets[0]).toMatchObject({ status: 'OPEN', sandbox: true });

    // Local development (docs/webhooks.md#local-development): a first start on loopback takes plain http:// callbacks to this
    // machine, and says so. A real receiver verifies the signed test event.
    expect(first.output()).toContain('Local development is on');
    const secret = (
      (await (
        await fetch(`http://127.0.0.1:${port}/api/v1/account/webhook-secret`, {
          headers: { authorization: `Bearer ${key}` },
        })
      ).json()) as { webhookSecret: string }
    ).webhookSecret;
    const verified: unknown[] = [];
    const receiver = createHttpServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      req.on('end', () => {
        verified.push(new Webhook(secret).verify(body, req.headers as Record<string, string>));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const receiverPort = (receiver.address() as AddressInfo).port;
    const test = await fetch(`http://127.0.0.1:${port}/api/v1/webhooks/test`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ callbackUrl: `http://localhost:${receiverPort}/hook` }),
    });
    expect(await test.json()).toMatchObject({ delivered: true, statusCode: 204 });
    expect(verified).toEqual([expect.objectContaining({ type: 'test' })]);
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
    expect(await stop(first.child)).toBe(0);

    const second = await start();
    const again = await fetch(`http://127.0.0.1:${port}/api/v1/account`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(again.status).toBe(200);
    // The banner comes last, once everything listens (readiness may answer just before it).
    const noticeBy = Date.now() + READY_WITHIN_MS;
    while (!second.output().includes('OpenAPI ') && Date.now() < noticeBy)
      await new Promise((r) => setTimeout(r, 50));
    // A later start says so, keeps local development on, and prints every address again.
    expect(second.output()).toContain(
      `Sibyl is running on the embedded database in ${dataDir} (started before`,
    );
    expect(second.output()).toContain(
      'Local development is on (turned on by the first start of this embedded database)',
    );
    expect(second.output()).not.toContain('first start on this machine');
    expect(second.output()).not.toContain('this first start');
    expect(second.output()).toContain(addressLines(port));
    expect(second.output()).not.toContain('API key');
    expect(await stop(second.child)).toBe(0);
  });
});
