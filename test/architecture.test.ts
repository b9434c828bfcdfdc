import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The shape of the house (docs/architecture.md), checked on every run: it fails when a file outside
 * the HTTP edge imports Fastify, when a feature reaches into a sealed feature's files instead of its
 * entry module, or when a `src/` file passes 400 lines.
 */

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

const FILES = sourceFiles(SRC).map((path) => ({
  path: relative(SRC, path).split(sep).join('/'),
  text: readFileSync(path, 'utf8'),
}));

/** `src/`-relative paths of the modules a file imports (relative imports only). */
function importsOf(file: { path: string; text: string }): string[] {
  const found: string[] = [];
  for (const match of file.text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
    const target = join(dirname(file.path), match[1] as string)
      .split(sep)
      .join('/');
    found.push(target.replace(/\.js$/, '.ts'));
  }
  return found;
}

/** The top-level folder of a `src/`-relative path, or null for a file directly in `src/`. */
function folderOf(path: string): string | null {
  const slash = path.indexOf('/');
  return slash === -1 ? null : path.slice(0, slash);
}

describe('the HTTP edge', () => {
  /** Where Fastify may be named: the edge, route files, and the two composition roots. */
  const mayImportFastify = (path: string) =>
    path.startsWith('http/') ||
    /(^|\/)routes\.ts$/.test(path) ||
    /-routes\.ts$/.test(path) ||
    /\/routes\//.test(path) ||
    path === 'app.ts' ||
    path === 'server.ts' ||
    // The dashboard's entry module registers its routes and serves the built page (its edge).
    path === 'dashboard/index.ts' ||
    path === 'dashboard/static.ts';

  it('no file outside http/, route files and the composition roots imports Fastify', () => {
    const offenders = FILES.filter(
      (file) =>
        !mayImportFastify(file.path) &&
        /(from\s+'(fastify|@fastify\/[^']+)')|(import\(\s*'fastify)|(declare module 'fastify')/.test(
          file.text,
        ),
    ).map((file) => file.path);
    expect(offenders).toEqual([]);
  });
});

describe('the rooms', () => {
  /**
   * Features: each one's entry module (`<feature>/index.ts`, its descriptor and what other rooms may
   * use) is its only door; another folder imports that module, never the files behind it. A new
   * folder must be listed here or below with its reason — the test fails for an unlisted one.
   */
  const SEALED = [
    'accounts',
    'ai',
    'dashboard',
    'deposits',
    'evaluation',
    'health',
    'historical',
    'idempotency',
    'jobs',
    'keys',
    'ledger',
    'limits',
    'markets',
    'prices',
    'retention',
    'streams',
    'webhooks',
  ];

  /** Folders that are not features: mechanisms any room may use, and the composition roots. */
  const OPEN: Record<string, string> = {
    lib: 'small pure helpers, imported by anyone',
    db: 'the Database port and its adapters',
    http: 'the HTTP edge (defineRoute, schemas, errors): every route file uses it',
    queue: 'the durable-work engine every feature uses',
    worker: 'composition only: walks the feature list',
    cli: 'composition only: walks the feature list',
    metrics: 'the Prometheus registry, a process-wide singleton every room reports to (docs/architecture.md)',
  };

  /**
   * ports.ts builds the outside world once per process (the API, the worker, `sibyl start`): the
   * constructors that load the AI SDKs (the resolver) and the HTTP agent (the transport) stay out
   * of their entry modules' eager graph, so that an operator command, which loads every entry
   * module, does not load them (docs/architecture.md, "CLI start-up stays light").
   */
  const PORTS = 'ports.ts constructs the heavy ports; the entry modules stay light for the command line';

  /**
   * Imports of a sealed feature's internals that are justified, `from -> to`, with the reason.
   */
  const ALLOWED: Record<string, string> = {
    'ports.ts -> ai/resolver.ts': PORTS,
    'ports.ts -> webhooks/transport.ts': PORTS,
    // A room built as door (index.ts) and descriptor (feature.ts): the feature list takes the descriptor.
    'features.ts -> evaluation/feature.ts': 'the feature list imports a split room’s descriptor',
    'features.ts -> streams/feature.ts':
      'a new room is built with its descriptor in feature.ts, apart from its door (the split every room is getting)',
  };

  it('every folder of src/ is a sealed feature or listed with its reason', () => {
    const folders = [...new Set(FILES.map((f) => folderOf(f.path)).filter((f) => f !== null))];
    const unlisted = folders.filter((folder) => !SEALED.includes(folder) && !(folder in OPEN));
    expect(unlisted).toEqual([]);
    for (const feature of SEALED) {
      expect(
        FILES.some((f) => f.path === `${feature}/index.ts`),
        `${feature}/index.ts`,
      ).toBe(true);
    }
  });

  it('a feature reaches a sealed feature only through its entry module', () => {
    const offenders: string[] = [];
    for (const file of FILES) {
      const from = folderOf(file.path);
      for (const target of importsOf(file)) {
        const to = folderOf(target);
        if (to === null || to === from || !SEALED.includes(to)) continue;
        if (target === `${to}/index.ts`) continue;
        if (`${file.path} -> ${target}` in ALLOWED) continue;
        offenders.push(`${file.path} -> ${target}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('every exception still names an import that exists', () => {
    const edges = new Set(
      FILES.flatMap((file) => importsOf(file).map((target) => `${file.path} -> ${target}`)),
    );
    expect(Object.keys(ALLOWED).filter((edge) => !edges.has(edge))).toEqual([]);
  });

  /** A file's imports of a feature's files (its door included), `from -> to`. */
  const featureImports = (file: { path: string; text: string }) =>
    importsOf(file)
      .filter((target) => SEALED.includes(folderOf(target) ?? ''))
      .map((target) => `${file.path} -> ${target}`);

  it('the event-stream mechanism imports no feature: every room opens its streams with it', () => {
    const mechanism = FILES.filter((file) => file.path.startsWith('http/event-stream/'));
    expect(mechanism.length).toBeGreaterThan(0);
    expect(mechanism.flatMap(featureImports)).toEqual([]);
    // The check itself sees such an import.
    const violation = {
      path: 'http/event-stream/x.ts',
      text: "import type { Principal } from '../../keys/index.js';",
    };
    expect(featureImports(violation)).toEqual(['http/event-stream/x.ts -> keys/index.ts']);
  });

  it('the worker and the command line are composition: no feature imports them', () => {
    const offenders = FILES.filter((file) => !['worker', 'cli'].includes(folderOf(file.path) ?? ''))
      .flatMap((file) =>
        importsOf(file)
          .filter((target) => ['worker', 'cli'].includes(folderOf(target) ?? ''))
          .map((target) => `${file.path} -> ${target}`),
      )
      // server.ts starts the worker; that is its job.
      .filter((edge) => !edge.startsWith('server.ts -> worker/'));
    expect(offenders).toEqual([]);
  });
});

describe('money', () => {
  /**
   * Money moves in the ledger's guarded statements only (docs/architecture.md, "The context and
   * transactions"): a statement elsewhere that writes an entry or a balance would skip the ledger's
   * invariants (the chained balances, one deposit per reference, refunds at most once).
   */
  const MONEY_WRITE =
    /INSERT\s+INTO\s+ledger_entries|UPDATE\s+ledger_entries|DELETE\s+FROM\s+ledger_entries|SET\s+balance_micros|balance_micros\s*=\s*balance_micros/i;

  it('only src/ledger/ writes ledger entries or balances', () => {
    const offenders = FILES.filter(
      (file) => folderOf(file.path) !== 'ledger' && MONEY_WRITE.test(file.text),
    ).map((file) => file.path);
    expect(offenders).toEqual([]);
  });

  it('the check itself sees such a statement', () => {
    expect(MONEY_WRITE.test('`UPDATE accounts SET balance_micros = balance_micros + $2 WHERE id = $1`')).toBe(
      true,
    );
    expect(MONEY_WRITE.test('INSERT INTO ledger_entries (account_id) VALUES ($1)')).toBe(true);
    expect(MONEY_WRITE.test('SELECT balance_micros FROM accounts')).toBe(false);
  });
});

describe('small files', () => {
  it('no src/ file passes 400 lines', () => {
    const long = FILES.filter((file) => file.text.split('\n').length > 400).map(
      (file) => `${file.path}: ${file.text.split('\n').length} lines`,
    );
    expect(long).toEqual([]);
  });
});
