import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { copyPgliteTemplate } from '../helpers/db.js';

/**
 * Commands are light (docs/architecture.md#light-commands): the built `sibyl accounts list`, run with
 * the loader hook of scripts/cli-startup.js, loads no route, no OpenAPI document or guide, no worker,
 * none of Fastify, Swagger, `marked` or `@fastify/static`, and fewer than 60 project modules before
 * its own `accounts/cli.js`.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DIST = `file://${ROOT}dist/`;

/** The modules a command loaded (URLs, in load order), from the hook's log. */
function loadedBy(args: string[]): string[] {
  const scratch = mkdtempSync(join(tmpdir(), 'sibyl-light-'));
  const log = join(scratch, 'loaded.log');
  const dataDir = copyPgliteTemplate();
  try {
    const result = spawnSync(
      process.execPath,
      ['--import', './scripts/cli-startup/register.js', BIN, ...args],
      {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          LOG_LEVEL: 'silent',
          SIBYL_DATA_DIR: dataDir,
          CLI_STARTUP_LOG: log,
          CLI_STARTUP_COUNT: '1',
        },
        encoding: 'utf8',
        timeout: 100_000,
      },
    );
    expect(result.status, result.stderr).toBe(0);
    return readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .filter((line) => !line.startsWith('cpu '));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    rmSync(dirname(dataDir), { recursive: true, force: true });
  }
}

/** What a command that serves nothing must not load: project modules by path, packages by name. */
const SERVING_MODULE =
  /(^|\/)routes(\.js$|\/)|-routes\.js$|^http\/(openapi|guides|edge)[\w-]*\.js$|^worker\/|^app\.js$/;
const SERVING_PACKAGE = /^(fastify|@fastify\/[\w-]+|marked|marked-[\w-]+)$/;

function heavyParts(urls: string[]): string[] {
  const project = urls.filter((url) => url.startsWith(DIST)).map((url) => url.slice(DIST.length));
  const packages = urls
    .map((url) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1])
    .filter((name): name is string => name !== undefined);
  return [
    ...project.filter((path) => SERVING_MODULE.test(path)),
    ...new Set(packages.filter((name) => SERVING_PACKAGE.test(name))),
  ];
}

/** The project modules loaded before the command's own implementation (`<room>/cli.js`). */
function beforeCommand(urls: string[], room: string): number {
  const project = urls.filter((url) => url.startsWith(DIST)).map((url) => url.slice(DIST.length));
  const own = project.indexOf(`${room}/cli.js`);
  expect(own, `${room}/cli.js loaded`).toBeGreaterThan(0);
  return own;
}

describe('a command is light', { timeout: 120_000 }, () => {
  it('sibyl accounts list loads nothing of the API and fewer than 60 modules before it runs', () => {
    const loaded = loadedBy(['accounts', 'list']);
    expect(heavyParts(loaded)).toEqual([]);
    expect(beforeCommand(loaded, 'accounts')).toBeLessThan(60);
  });

  it('the check itself sees routes, the OpenAPI document, the worker and the serving packages', () => {
    const urls = [
      `${DIST}cli/main.js`,
      `${DIST}markets/routes.js`,
      `${DIST}webhooks/stream-routes.js`,
      `${DIST}dashboard/routes/define.js`,
      `${DIST}http/openapi.js`,
      `${DIST}worker/worker.js`,
      `${DIST}http/route-spec.js`,
      `${DIST}accounts/cli.js`,
      `file://${ROOT}node_modules/fastify/fastify.js`,
      `file://${ROOT}node_modules/@fastify/static/index.js`,
      `file://${ROOT}node_modules/marked/lib/marked.esm.js`,
      `file://${ROOT}node_modules/typebox/build/index.mjs`,
    ];
    expect(heavyParts(urls)).toEqual([
      'markets/routes.js',
      'webhooks/stream-routes.js',
      'dashboard/routes/define.js',
      'http/openapi.js',
      'worker/worker.js',
      'fastify',
      '@fastify/static',
      'marked',
    ]);
    expect(beforeCommand(urls, 'accounts')).toBe(7);
  });
});
