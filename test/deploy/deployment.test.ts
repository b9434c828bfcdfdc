import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config.js';

// The deployment recipe (Dockerfile, compose.yaml, deploy/) cannot be built or run here (no Docker
// engine); this checks what it relies on in the repository: the commands, ports, paths and settings
// it names exist and parse. docs/operations.md#deployment says what was and was not run.
const root = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

interface ComposeService {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  deploy?: { replicas?: string | number };
  healthcheck?: { test?: string[]; disable?: boolean };
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
  profiles?: string[];
}
const compose = parse(read('compose.yaml'), { merge: true }) as { services: Record<string, ComposeService> };
const services = compose.services;
const dockerfile = read('Dockerfile');

let commands: Set<string> | undefined;
/** The commands `sibyl --help` lists (its first words): what `sibyl X` can run. */
function cliCommands(): Set<string> {
  commands ??= new Set(
    [
      ...execFileSync(process.execPath, [new URL('bin/sibyl.js', root).pathname, '--help'], {
        encoding: 'utf8',
      }).matchAll(/^ {2}([a-z]+)\b/gm),
    ].map((m) => m[1] ?? ''),
  );
  return commands;
}

/** Compose's `${NAME:-default}` and `${NAME:?message}`: the default, or the sample value given. */
function interpolate(value: string, samples: Record<string, string>): string {
  return value.replaceAll(
    /\$\{([A-Z0-9_]+)(?::([-?])([^}]*))?\}/g,
    (_all, name: string, kind, rest: string) => {
      if (samples[name] !== undefined) return samples[name];
      if (kind === '-') return rest;
      throw new Error(`${name} has no default and no sample`);
    },
  );
}

describe('the Dockerfile', () => {
  it('builds on node:20-bookworm-slim in two stages and runs as the node user', () => {
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:20-bookworm-slim$/m);
    const stages = [...dockerfile.matchAll(/^FROM \$\{NODE_IMAGE\} AS (\w+)$/gm)].map((m) => m[1]);
    expect(stages).toEqual(['build', 'runtime']);
    const runtime = dockerfile.slice(dockerfile.indexOf('AS runtime'));
    expect(runtime).toMatch(/npm ci --omit=dev --ignore-scripts/);
    expect(runtime).toMatch(/^COPY --from=build \/app\/dist dist$/m);
    expect(runtime).toMatch(/^USER node$/m);
  });

  it('copies what exists and is not ignored, runs a script that exists, and links bin/sibyl.js', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .filter((line) => line && !line.startsWith('#'));
    for (const [, from] of dockerfile.matchAll(/^COPY (?!--from)(\S+)/gm)) {
      if (from === '.') continue;
      expect(existsSync(new URL(from as string, root)), from).toBe(true);
      expect(ignored, from).not.toContain(from);
    }
    for (const needed of [
      'src',
      'client',
      'scripts',
      'bin',
      'docs',
      'tsconfig.json',
      'tsconfig.build.json',
    ]) {
      expect(ignored).not.toContain(needed);
    }
    const pkg = JSON.parse(read('package.json')) as {
      scripts: Record<string, string>;
      bin: Record<string, string>;
    };
    for (const [, script] of dockerfile.matchAll(/npm run (\S+)/g))
      expect(pkg.scripts).toHaveProperty(script as string);
    expect(dockerfile).toContain('ln -s /app/bin/sibyl.js /usr/local/bin/sibyl');
    expect(pkg.bin.sibyl).toBe('bin/sibyl.js');
  });

  it('runs a command the CLI has, and checks /healthz, a route of the service', () => {
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)?.[1] ?? '[]') as string[];
    expect(cmd).toEqual(['sibyl', 'serve']);
    expect(cliCommands()).toContain('serve');
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\n.*\/healthz/m);
    const openapi = JSON.parse(read('client/openapi.json')) as { paths: Record<string, unknown> };
    expect(openapi.paths).toHaveProperty('/healthz');
    expect(dockerfile).toMatch(/PORT=3000/);
    expect(dockerfile).toMatch(/^EXPOSE 3000$/m);
  });
});

describe('compose.yaml', () => {
  it('has PostgreSQL 15, Redis 7, a migration step, N API and M worker processes, and Caddy', () => {
    expect(Object.keys(services).sort()).toEqual([
      'api',
      'caddy',
      'migrate',
      'postgres',
      'prometheus',
      'redis',
      'worker',
    ]);
    expect(services.postgres?.image).toMatch(/^postgres:15\b/);
    expect(services.redis?.image).toMatch(/^redis:7\b/);
    // N and M: settable (SIBYL_API_REPLICAS, SIBYL_WORKER_REPLICAS, or --scale), 2 and 1 by default.
    expect(interpolate(String(services.api?.deploy?.replicas), {})).toBe('2');
    expect(interpolate(String(services.api?.deploy?.replicas), { SIBYL_API_REPLICAS: '5' })).toBe('5');
    expect(interpolate(String(services.worker?.deploy?.replicas), {})).toBe('1');
    expect(services.api?.depends_on?.migrate?.condition).toBe('service_completed_successfully');
    expect(services.worker?.depends_on?.migrate?.condition).toBe('service_completed_successfully');
    expect(services.prometheus?.profiles).toEqual(['monitoring']);
  });

  it('runs sibyl commands the CLI has', () => {
    const commands = cliCommands();
    const run = Object.fromEntries(
      ['migrate', 'api', 'worker'].map((name) => [name, services[name]?.command ?? []]),
    );
    expect(run).toEqual({
      migrate: ['sibyl', 'migrate'],
      api: ['sibyl', 'serve'],
      worker: ['sibyl', 'work'],
    });
    for (const [, command] of Object.values(run)) expect(commands).toContain(command);
  });

  it('gives the service settings it reads and accepts, documented in docs/operations.md', () => {
    const operations = read('docs/operations.md');
    const samples = {
      POSTGRES_PASSWORD: 'secret',
      SECRET_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
    };
    for (const name of ['api', 'worker', 'migrate']) {
      const environment = services[name]?.environment ?? {};
      const env = Object.fromEntries(
        Object.entries(environment).map(([key, value]) => [key, interpolate(String(value), samples)]),
      );
      for (const key of Object.keys(env))
        expect(operations, key).toContain(`| \`${key.replace(/_\d_/, '_n_')}\``);
      const config = loadConfig(env);
      expect(config.databaseUrl).toBe('postgres://sibyl:secret@postgres:5432/sibyl');
      expect(config.metrics.port).toBe(9464);
    }
  });

  it('checks a worker through its metrics listener, on the port it is given', () => {
    const port = services.worker?.environment?.METRICS_PORT;
    expect(services.worker?.healthcheck?.test?.join(' ')).toContain(`http://127.0.0.1:${port}/metrics`);
    expect(services.migrate?.healthcheck?.disable).toBe(true);
  });

  it('mounts the Caddyfile and the Prometheus files that exist, and Caddy proxies to the API port', () => {
    expect(services.caddy?.volumes).toContain('./deploy/Caddyfile:/etc/caddy/Caddyfile:ro');
    expect(services.prometheus?.volumes).toContain('./deploy/prometheus:/etc/prometheus:ro');
    const caddyfile = read('deploy/Caddyfile');
    expect(caddyfile).toMatch(/name api\n\s+port 3000\n/);
    const prometheus = parse(read('deploy/prometheus/prometheus.yml')) as {
      rule_files: string[];
      scrape_configs: { job_name: string; dns_sd_configs: { names: string[]; port: number }[] }[];
    };
    for (const file of prometheus.rule_files)
      expect(existsSync(new URL(`deploy/prometheus/${file}`, root))).toBe(true);
    expect(
      prometheus.scrape_configs.map((c) => [
        c.job_name,
        c.dns_sd_configs[0]?.names,
        c.dns_sd_configs[0]?.port,
      ]),
    ).toEqual([
      ['sibyl-api', ['api'], 9464],
      ['sibyl-worker', ['worker'], 9464],
    ]);
  });
});
