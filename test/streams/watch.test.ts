import { type AddressInfo, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { table } from '../../src/streams/watch.js';
import { createTestContext, type TestContext } from '../helpers/context.js';

/**
 * `sibyl stream prices SOL JUP` (docs/streams.md#in-a-terminal) against the real service: plain
 * lines when stdout is not a terminal (a line per price), the table when it is; refusals end it
 * with the service's error; bad command lines are usage errors.
 */

let ctx: TestContext;
let base: string;

beforeAll(async () => {
  ctx = await createTestContext();
  await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await ctx.close();
});

function running(args: string[], env: Record<string, string>, terminal = false) {
  const stop = new AbortController();
  let stdout = '';
  const exit = runCli(args, {
    env: { SIBYL_API_URL: base, LOG_LEVEL: 'silent', ...env },
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stdout += text;
    },
    signal: stop.signal,
    terminal,
  });
  return { exit, stop: () => stop.abort(), output: () => stdout };
}

/** A port of this machine where nothing listens: one a server held, then let go. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 20));
}

describe('sibyl stream prices', () => {
  it('prints a plain line per price when stdout is not a terminal, then stops on a signal', async () => {
    const account = await ctx.createAccount({ mode: 'sandbox' });
    const cli = running(['stream', 'prices', 'SOL', 'JUP'], { SIBYL_API_KEY: account.key });
    await until(
      () =>
        cli
          .output()
          .split('\n')
          .filter((l) => /sources/.test(l)).length >= 2,
    );
    cli.stop();
    expect(await cli.exit).toBe(0);
    const lines = cli.output().trim().split('\n');
    expect(lines[0]).toBe(
      `streaming SOL, JUP from ${base}/api/v1/stream/prices (0.002 USD per started minute)`,
    );
    expect(lines[1]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z {2}SOL {2}\d+(\.\d+)? {2}\d+ sources/);
    expect(lines[2]).toMatch(/ {2}JUP {2}/);
    // No escape sequences in a pipe.
    expect(cli.output()).not.toContain('\u001b[');
  });

  it('on a terminal, redraws one table in place', async () => {
    const account = await ctx.createAccount({ mode: 'sandbox' });
    const cli = running(['stream', 'prices', 'SOL,BONK'], { SIBYL_API_KEY: account.key }, true);
    await until(() => (cli.output().match(/SYMBOL/g) ?? []).length >= 2);
    cli.stop();
    expect(await cli.exit).toBe(0);
    // The second drawing goes back over the first (3 lines: the head, SOL, BONK).
    expect(cli.output()).toContain('\u001b[3A');
    expect(cli.output()).toMatch(/SOL +\d/);
  });

  it('says where it tried when nothing listens there, as `webhooks listen` does, and keeps trying', async () => {
    const closed = await closedPort();
    for (const args of [
      ['stream', 'prices', 'SOL'],
      ['webhooks', 'listen', '--forward-to', 'http://localhost:4000/hook'],
    ]) {
      const cli = running(args, { SIBYL_API_KEY: 'pk_test_x', SIBYL_API_URL: `http://127.0.0.1:${closed}` });
      await until(() => cli.output().includes('reconnecting'));
      cli.stop();
      expect(await cli.exit).toBe(0);
      expect(cli.output().split('\n')[0]).toBe(
        `nothing listens at http://127.0.0.1:${closed} (set SIBYL_API_URL or --api-url to the service's address); reconnecting`,
      );
    }
  });

  it('a refusal ends it with the service error; a bad command line is a usage error', async () => {
    const poor = await ctx.createAccount({ mode: 'sandbox', balanceUsd: '0.001' });
    const refused = running(['stream', 'prices', 'SOL'], { SIBYL_API_KEY: poor.key });
    expect(await refused.exit).toBe(1);
    expect(refused.output()).toContain('402 (INSUFFICIENT_BALANCE');
    const noSymbols = running(['stream', 'prices'], { SIBYL_API_KEY: poor.key });
    expect(await noSymbols.exit).toBe(2);
    const noKey = running(['stream', 'prices', 'SOL'], {});
    expect(await noKey.exit).toBe(2);
    expect(noKey.output()).toContain('SIBYL_API_KEY');
  });

  it('the table: one row per symbol asked, in order, aligned', () => {
    const rows = new Map([
      [
        'SOL',
        {
          price: '142.5',
          valid: true,
          sources: 3,
          spread: '0.010%',
          at: '2026-11-28T05:00:00.123Z',
          note: '',
        },
      ],
    ]);
    expect(table(['SOL', 'JUP'], rows)).toEqual([
      'SYMBOL  VWAP (USD)  SOURCES  SPREAD  AT (UTC)',
      'SOL     142.5       3        0.010%  05:00:00.123',
      'JUP     …',
    ]);
  });
});
