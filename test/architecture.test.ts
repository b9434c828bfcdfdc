import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The shape of the house (docs/architecture.md), checked on every run: it fails when a file outside
 * the HTTP edge imports Fastify, when a folder is neither a sealed room nor listed with its reason,
 * when `src/features.ts` misses a descriptor, when a file reaches into a sealed room's files instead
 * of its door, when the event-stream mechanism imports a feature, when a composition root is imported
 * or names a room it does not state, when an import cycle spans two folders (or an unnamed one stays
 * in one), when a door loads its own descriptor, commands or routes, when a door exports what no other
 * room uses, when doors form a cycle, when a room imports its own door, when the ground floor imports a
 * feature, when a door's verb takes the database first unnamed, when a verb uses its context's pool
 * (`ctx.db`) unnamed, when the graph of folders closes a cycle but the arrows named, when a table
 * has no owner or two, when a room's SQL names another room's table unnamed, when money moves outside the ledger, when a file but `lib/redis.ts` makes a Redis
 * client, or when a `src/` file passes 400 lines. Each rule is shown to fail on a deliberate violation,
 * beside its check.
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

type SourceFile = { path: string; text: string };

/**
 * `src/`-relative paths of the modules a file imports (relative imports only): static, type-only
 * (`import type`, `export type … from`) and dynamic (`import('…')`) imports alike.
 */
function importsOf(file: SourceFile): string[] {
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
  /** Where Fastify may be named: the edge (`http/`, `gate/`), route files, and the two composition roots that build the server. */
  const mayImportFastify = (path: string) =>
    path.startsWith('http/') ||
    path.startsWith('gate/') ||
    /(^|\/)routes\.ts$/.test(path) ||
    /-routes\.ts$/.test(path) ||
    /\/routes\//.test(path) ||
    path === 'app.ts' ||
    path === 'server.ts';

  /**
   * Other files that may import Fastify, each with its reason: none today (the dashboard's static-file
   * plugin is one of its route files, `dashboard/routes/static.ts`).
   */
  const FASTIFY_ALLOWED: Record<string, string> = {};

  const importsFastify = (file: SourceFile) =>
    /(from\s+'(fastify|@fastify\/[^']+)')|(import\(\s*'(fastify|@fastify\/))|(declare module 'fastify')/.test(
      file.text,
    );

  const fastifyOffenders = (files: SourceFile[]) =>
    files
      .filter(
        (file) => !mayImportFastify(file.path) && !(file.path in FASTIFY_ALLOWED) && importsFastify(file),
      )
      .map((file) => file.path);

  it('no file outside http/, gate/, route files, app.ts and server.ts imports Fastify', () => {
    expect(fastifyOffenders(FILES)).toEqual([]);
  });

  it('every Fastify exception still names a file that imports it, outside the edge', () => {
    const stale = Object.keys(FASTIFY_ALLOWED).filter((path) => {
      const file = FILES.find((f) => f.path === path);
      return !file || mayImportFastify(path) || !importsFastify(file);
    });
    expect(stale).toEqual([]);
  });

  it('the check itself sees Fastify named outside the edge', () => {
    const files = [
      { path: 'jobs/runner.ts', text: "import type { FastifyRequest } from 'fastify';" },
      { path: 'jobs/verbs.ts', text: "declare module 'fastify' { interface FastifyInstance { x: 1 } }" },
      { path: 'jobs/static.ts', text: "const s = await import('@fastify/static');" },
      { path: 'dashboard/static.ts', text: "import fastifyStatic from '@fastify/static';" },
      { path: 'jobs/routes.ts', text: "import type { FastifyInstance } from 'fastify';" },
      { path: 'dashboard/routes/static.ts', text: "import fastifyStatic from '@fastify/static';" },
      { path: 'http/cors.ts', text: "import type { FastifyInstance } from 'fastify';" },
      { path: 'server.ts', text: "import type { FastifyInstance } from 'fastify';" },
    ];
    expect(fastifyOffenders(files)).toEqual([
      'jobs/runner.ts',
      'jobs/verbs.ts',
      'jobs/static.ts',
      'dashboard/static.ts',
    ]);
    expect(fastifyOffenders([{ path: 'jobs/x.ts', text: "import('fastify')" }])).toEqual(['jobs/x.ts']);
  });
});

describe('the rooms', () => {
  /**
   * Features: each one's door (`<feature>/index.ts`, what other rooms may use) is the only file
   * another folder imports, never the files behind it; `src/features.ts` alone imports each one's
   * descriptor (`<feature>/feature.ts`). A new folder must be listed here or below with its reason —
   * the test fails for an unlisted one.
   */
  const SEALED = [
    'attestations',
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
    http: 'the HTTP mechanism (defineRoute, schemas, errors, OpenAPI, event streams): every route file uses it; it imports no room',
    gate: 'the gate: authenticates, limits and bills every declared route, above keys, limits, ledger and idempotency; app.ts installs it',
    queue: 'the durable-work engine every feature uses',
    worker: 'composition only: walks the feature list',
    cli: 'composition only: walks the feature list',
    metrics: 'the Prometheus registry, a process-wide singleton every room reports to (docs/architecture.md)',
  };

  /**
   * Imports of a sealed feature's internals that are justified, `from -> to`, with the reason: none
   * today. (The ports' heavy constructors, the AI resolver and the webhook transport, are loaded
   * through their doors' `loadResolver` and `loadTransport`; the list of descriptors is checked below.)
   */
  const ALLOWED: Record<string, string> = {};

  /** Folders of `src/` that are neither sealed nor listed with a reason, and sealed ones without a door or descriptor. */
  const unlistedFolders = (files: SourceFile[], sealed: string[]) => {
    const folders = [...new Set(files.map((f) => folderOf(f.path)).filter((f) => f !== null))];
    const unlisted = folders.filter((folder) => !sealed.includes(folder) && !(folder in OPEN));
    const missing = sealed.flatMap((room) =>
      [`${room}/index.ts`, `${room}/feature.ts`].filter((path) => !files.some((f) => f.path === path)),
    );
    return [...unlisted, ...missing];
  };

  it('every folder of src/ is a sealed feature or listed with its reason', () => {
    expect(unlistedFolders(FILES, SEALED)).toEqual([]);
  });

  it('the check itself sees an unlisted folder and a sealed room without its door or descriptor', () => {
    const files = [
      { path: 'lib/money.ts', text: '' },
      { path: 'quotes/quote.ts', text: '' },
      { path: 'jobs/index.ts', text: '' },
    ];
    expect(unlistedFolders(files, ['jobs'])).toEqual(['quotes', 'jobs/feature.ts']);
  });

  /** What `src/features.ts` imports beside each sealed room's descriptor, and the descriptors it misses. */
  const descriptorListProblems = (files: SourceFile[], sealed: string[]) => {
    const features = files.find((f) => f.path === 'features.ts');
    const listed = features ? importsOf(features) : [];
    const wanted = sealed.map((room) => `${room}/feature.ts`);
    return [
      ...wanted.filter((path) => !listed.includes(path)).map((path) => `missing ${path}`),
      ...listed.filter((path) => !wanted.includes(path)).map((path) => `extra ${path}`),
    ];
  };

  it('src/features.ts lists every descriptor, and nothing else', () => {
    expect(descriptorListProblems(FILES, SEALED)).toEqual([]);
  });

  it('the check itself sees a descriptor missing from the list, and a file that is none', () => {
    const features = {
      path: 'features.ts',
      text: "import { jobsFeature } from './jobs/feature.js';\nimport { x } from './jobs/runner.js';",
    };
    expect(descriptorListProblems([features], ['jobs', 'keys'])).toEqual([
      'missing keys/feature.ts',
      'extra jobs/runner.ts',
    ]);
  });

  /** Imports of a sealed room's files other than its door, `from -> to` (the list of descriptors excepted). */
  const doorOffenders = (files: SourceFile[], sealed: string[]) => {
    const offenders: string[] = [];
    for (const file of files) {
      const from = folderOf(file.path);
      for (const target of importsOf(file)) {
        const to = folderOf(target);
        if (to === null || to === from || !sealed.includes(to)) continue;
        if (target === `${to}/index.ts`) continue;
        // The list of descriptors, and nothing else, names each room's descriptor.
        if (file.path === 'features.ts' && target === `${to}/feature.ts`) continue;
        if (`${file.path} -> ${target}` in ALLOWED) continue;
        offenders.push(`${file.path} -> ${target}`);
      }
    }
    return offenders;
  };

  it('a feature reaches a sealed feature only through its door', () => {
    expect(doorOffenders(FILES, SEALED)).toEqual([]);
  });

  it('the check itself sees a room, the edge or a root reaching behind a door', () => {
    const files = [
      {
        path: 'jobs/runner.ts',
        text: "import { charge } from '../ledger/charge.js';\nimport { x } from './sql.js';",
      },
      { path: 'http/route.ts', text: "import type { Principal } from '../keys/principal.js';" },
      { path: 'app.ts', text: "import { jobsFeature } from './jobs/feature.js';" },
      { path: 'features.ts', text: "import { jobsFeature } from './jobs/feature.js';" },
      { path: 'ports.ts', text: "import { x } from './ledger/index.js';" },
    ];
    expect(doorOffenders(files, ['jobs', 'keys', 'ledger'])).toEqual([
      'jobs/runner.ts -> ledger/charge.ts',
      'http/route.ts -> keys/principal.ts',
      'app.ts -> jobs/feature.ts',
    ]);
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

  /** The composition roots: the folders and the root files that walk the feature list or build the process. */
  const COMPOSITION_FOLDERS = ['worker', 'cli'];
  const COMPOSITION_FILES = [
    'features.ts',
    'config.ts',
    'ports.ts',
    'app.ts',
    'server.ts',
    'first-start.ts',
    'start-banner.ts',
  ];
  const isComposition = (path: string) =>
    COMPOSITION_FOLDERS.includes(folderOf(path) ?? '') || COMPOSITION_FILES.includes(path);

  /** Imports of a composition root by a file that is none, `from -> to`. */
  const compositionImports = (files: SourceFile[]) =>
    files
      .filter((file) => !isComposition(file.path))
      .flatMap((file) =>
        importsOf(file)
          .filter(isComposition)
          .map((target) => `${file.path} -> ${target}`),
      );

  it('no room, no mechanism and no ground-floor file imports a composition root', () => {
    expect(compositionImports(FILES)).toEqual([]);
  });

  it('the check itself sees a room that imports a composition root', () => {
    const files = [
      { path: 'jobs/runner.ts', text: "import type { Config } from '../config.js';" },
      { path: 'http/route.ts', text: "const w = () => import('../worker/worker.js');" },
      { path: 'ai/providers/openai.ts', text: "import type { ModelSlot } from '../config.js';" },
      { path: 'server.ts', text: "import { createWorker } from './worker/worker.js';" },
    ];
    expect(compositionImports(files)).toEqual([
      'jobs/runner.ts -> config.ts',
      'http/route.ts -> worker/worker.ts',
    ]);
  });

  /**
   * The rooms each composition root names (imports from), with the reason; any other room it reaches
   * through the feature list only (docs/architecture.md#the-feature-descriptor).
   */
  const ROOTS_NAME: Record<string, Record<string, string>> = {
    'config.ts': {},
    'features.ts': {}, // its descriptors only, checked above
    'cli/run.ts': {},
    'worker/worker.ts': {
      retention: "the order of a run over every room's pruned tables (pruneOrder)",
      deposits: "a test's own prices and chain for the deposit watcher (WorkerDeps.deposits)",
    },
    'app.ts': {
      keys: 'the edge: authentication',
      limits: 'the edge: rate limits, quotas, access settings',
      ledger: 'the edge: billing',
      idempotency: 'the edge: Idempotency-Key claims and stored answers',
    },
    'ports.ts': {
      ai: 'the AI resolver and the market questions it reads (Resolver, MarketSource)',
      attestations: 'the attestor (createAttestations)',
      historical: 'the historical service with its candle venues',
      jobs: 'the resolution scheduled AI jobs run (aiJobResolver)',
      keys: "the names of an account's keys the ledger's usage report shows (keyNames)",
      markets: 'the market source (marketSource)',
      prices: 'the price service and its venues',
      webhooks: 'the secret box, the webhook transport and outbox',
    },
    'first-start.ts': {
      accounts: "a first start's sandbox account, with its play money",
      keys: 'its key',
      markets: 'the demo markets (loadDemoMarkets)',
      webhooks: "the secret box's type, which the account's webhook secret is sealed with",
    },
    'server.ts': {
      webhooks: 'local development: private callback targets, and the notice that says so at start',
    },
    'start-banner.ts': {},
  };

  /** The rooms a composition root imports that it does not name, `root -> room`. */
  const unnamedRooms = (files: SourceFile[], rooms: string[]) =>
    files
      .filter((file) => file.path in ROOTS_NAME || folderOf(file.path) === 'cli')
      .flatMap((file) => {
        const named = ROOTS_NAME[file.path] ?? {};
        return [...new Set(importsOf(file).map((target) => folderOf(target) ?? ''))]
          .filter((room) => rooms.includes(room) && !(room in named) && file.path !== 'features.ts')
          .map((room) => `${file.path} -> ${room}`);
      });

  it('the composition roots that walk the list name no room but those stated with their reason', () => {
    expect(unnamedRooms(FILES, SEALED)).toEqual([]);
    // No stale entry: each named room is still imported.
    const stale = Object.entries(ROOTS_NAME).flatMap(([root, named]) => {
      const file = FILES.find((f) => f.path === root) as SourceFile;
      const imported = importsOf(file).map((target) => folderOf(target));
      return Object.keys(named)
        .filter((room) => !imported.includes(room))
        .map((room) => `${root} -> ${room}`);
    });
    expect(stale).toEqual([]);
  });

  it('the check itself sees a composition root that names a room', () => {
    const files = [
      { path: 'config.ts', text: "import { jobSettings } from './jobs/index.js';" },
      { path: 'cli/run.ts', text: "const c = () => import('../accounts/index.js');" },
      { path: 'worker/worker.ts', text: "import { pruneOrder } from '../retention/index.js';" },
    ];
    expect(unnamedRooms(files, ['jobs', 'accounts', 'retention'])).toEqual([
      'config.ts -> jobs',
      'cli/run.ts -> accounts',
    ]);
  });
});

/** The import graph of a set of files: each file's imports among them (`src/`-relative paths). */
function graphOf(files: SourceFile[]): Map<string, string[]> {
  const known = new Set(files.map((file) => file.path));
  return new Map(files.map((file) => [file.path, importsOf(file).filter((target) => known.has(target))]));
}

/** The strongly connected components of more than one file: each an import cycle (Tarjan). */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** Every file a file reaches through its imports (itself included). */
function reach(graph: Map<string, string[]>, from: string, within: (path: string) => boolean = () => true) {
  const seen = new Set<string>();
  const todo = [from];
  while (todo.length > 0) {
    const v = todo.pop() as string;
    if (seen.has(v) || !within(v)) continue;
    seen.add(v);
    todo.push(...(graph.get(v) ?? []));
  }
  return seen;
}

/** The node of a file in the graph of folders: its folder, or the root file itself. */
const nodeOf = (path: string) => folderOf(path) ?? path;

/** The graph of folders: `from -> to` for each import between two (type and dynamic ones included). */
function folderGraph(files: SourceFile[]): Map<string, string[]> {
  const graph = new Map<string, Set<string>>();
  for (const file of files) {
    const from = nodeOf(file.path);
    for (const target of importsOf(file)) {
      const to = nodeOf(target);
      if (to === from) continue;
      graph.set(from, (graph.get(from) ?? new Set()).add(to));
    }
  }
  return new Map([...graph].map(([from, to]) => [from, [...to]]));
}

describe('every arrow runs one way', () => {
  /**
   * Imports from one folder to another that close a cycle of folders, `from -> to`, with the reason.
   * Any other import runs one way: the graph of folders (rooms, mechanisms, root files) has no cycle,
   * so that no room reaches back up to one that imports it (docs/architecture.md#one-way).
   */
  const BACK_ARROWS: Record<string, string> = {
    'accounts -> keys':
      "GET /account describes the calling key (its permissions, keys' PermissionName): a route of accounts reads the room above",
  };

  /** The cycles of folders left once the named arrows are set aside. */
  const folderCycles = (files: SourceFile[], named: Record<string, string>) => {
    const graph = folderGraph(files);
    for (const [from, to] of graph)
      graph.set(
        from,
        to.filter((target) => !(`${from} -> ${target}` in named)),
      );
    return cyclesOf(graph);
  };

  it('the graph of folders has no cycle, but the arrows named with their reason', () => {
    expect(folderCycles(FILES, BACK_ARROWS)).toEqual([]);
    // No stale entry: each named arrow is still there, and still closes a cycle.
    const graph = folderGraph(FILES);
    const stale = Object.keys(BACK_ARROWS).filter((arrow) => {
      const [from, to] = arrow.split(' -> ') as [string, string];
      return !graph.get(from)?.includes(to) || !reach(graph, to).has(from);
    });
    expect(stale).toEqual([]);
  });

  it('the check itself sees the edge reaching back into a room whose routes import it', () => {
    const files = [
      { path: 'keys/routes.ts', text: "import { defineRoute } from '../http/route.js';" },
      { path: 'http/route.ts', text: "import type { Principal } from '../keys/index.js';" },
      {
        path: 'gate/gate.ts',
        text: "import { requirePermission } from '../keys/index.js';\nimport '../http/route.js';",
      },
      { path: 'app.ts', text: "import { createGate } from './gate/gate.js';" },
    ];
    expect(folderCycles(files, {})).toEqual([['http', 'keys']]);
    expect(folderCycles(files, { 'http -> keys': 'named' })).toEqual([]);
    expect(
      folderCycles(
        files.filter((file) => file.path !== 'http/route.ts'),
        {},
      ),
    ).toEqual([]);
  });
});

describe('no import cycles', () => {
  /** Cycles that stay in one folder, each with its reason (docs/architecture.md#import-cycles): none today. */
  const FOLDER_CYCLES: Record<string, string> = {};

  const spansFolders = (cycle: string[]) => new Set(cycle.map((path) => folderOf(path) ?? '.')).size > 1;

  it('no import cycle spans two folders (type and dynamic imports included)', () => {
    expect(cyclesOf(graphOf(FILES)).filter(spansFolders)).toEqual([]);
  });

  /** Cycles inside one folder that `FOLDER_CYCLES` does not name, each `a <-> b`. */
  const unnamedFolderCycles = (files: SourceFile[]) =>
    cyclesOf(graphOf(files))
      .filter((cycle) => !spansFolders(cycle))
      .map((cycle) => cycle.join(' <-> '))
      .filter((cycle) => !(cycle in FOLDER_CYCLES));

  it('a cycle inside one folder is named with its reason', () => {
    expect(unnamedFolderCycles(FILES)).toEqual([]);
  });

  it('the check itself sees an unnamed cycle inside one folder', () => {
    const files = [
      { path: 'jobs/runner.ts', text: "import { x } from './sql.js';" },
      { path: 'jobs/sql.ts', text: "import type { Job } from './runner.js';" },
    ];
    expect(unnamedFolderCycles(files)).toEqual(['jobs/runner.ts <-> jobs/sql.ts']);
  });

  it('the check itself sees a cycle of two folders, even through a type import', () => {
    const files = [
      { path: 'a/x.ts', text: "import { y } from '../b/y.js';" },
      { path: 'b/y.ts', text: "import type { X } from '../a/x.js';\nexport const y = 1;" },
      { path: 'b/z.ts', text: "const load = () => import('./y.js');" },
    ];
    expect(cyclesOf(graphOf(files)).filter(spansFolders)).toEqual([['a/x.ts', 'b/y.ts']]);
    expect(cyclesOf(graphOf(files.slice(1)))).toEqual([]);
  });
});

describe('the doors', () => {
  const ROOMS = [...new Set(FILES.map((f) => folderOf(f.path)))].filter(
    (folder): folder is string => folder !== null && FILES.some((f) => f.path === `${folder}/feature.ts`),
  );

  /** What a door must never load, directly or through its room's files: its descriptor, commands, routes. */
  const descriptorPart = (room: string, path: string) =>
    path === `${room}/feature.ts` ||
    path === `${room}/cli.ts` ||
    /-cli\.ts$/.test(path) ||
    /(^|\/)routes\.ts$/.test(path) ||
    /-routes\.ts$/.test(path) ||
    path.startsWith(`${room}/routes/`);

  /** The files of its own room a door loads (static, type and dynamic imports) that are descriptor parts. */
  const doorLoads = (files: SourceFile[], room: string) =>
    [...reach(graphOf(files), `${room}/index.ts`, (path) => folderOf(path) === room)].filter((path) =>
      descriptorPart(room, path),
    );

  it('a door imports neither its descriptor nor its commands nor its routes', () => {
    expect(ROOMS.length).toBeGreaterThan(10);
    expect(ROOMS.flatMap((room) => doorLoads(FILES, room))).toEqual([]);
  });

  it('the check itself sees a door that loads its commands', () => {
    const files = [
      { path: 'jobs/index.ts', text: "export { jobsList } from './verbs.js';" },
      { path: 'jobs/verbs.ts', text: "export const run = () => import('./cli.js');" },
      { path: 'jobs/cli.ts', text: '' },
      { path: 'jobs/feature.ts', text: "import('./routes.js');" },
      { path: 'jobs/routes.ts', text: '' },
    ];
    expect(doorLoads(files, 'jobs')).toEqual(['jobs/cli.ts']);
  });

  /** Door A -> door B when a file A's door loads inside room A imports door B. */
  const doorGraph = (files: SourceFile[], rooms: string[]) => {
    const graph = graphOf(files);
    return new Map(
      rooms.map((room) => [
        `${room}/index.ts`,
        [...reach(graph, `${room}/index.ts`, (path) => folderOf(path) === room)]
          .flatMap((path) => graph.get(path) ?? [])
          .filter((target) => target.endsWith('/index.ts') && folderOf(target) !== room),
      ]),
    );
  };

  it('the graph of doors has no cycle', () => {
    expect(cyclesOf(doorGraph(FILES, ROOMS))).toEqual([]);
  });

  it('the check itself sees two doors that load each other', () => {
    const files = [
      { path: 'a/index.ts', text: "export * from './a.js';" },
      { path: 'a/a.ts', text: "import type { B } from '../b/index.js';" },
      { path: 'b/index.ts', text: "export { b } from './b.js';" },
      { path: 'b/b.ts', text: "import { a } from '../a/index.js';" },
    ];
    expect(cyclesOf(doorGraph(files, ['a', 'b']))).toEqual([['a/index.ts', 'b/index.ts']]);
  });

  /** The names a door exports: by name from its room's files (`export { a, type B, c as d } from`), and its own. */
  const doorExports = (door: SourceFile) => [
    ...[...door.text.matchAll(/export\s*(?:type\s*)?\{([^}]*)\}\s*from/g)].flatMap((match) =>
      (match[1] as string)
        .split(',')
        .map((part) => part.trim().replace(/^type\s+/, ''))
        .filter((part) => part !== '')
        .map((part) => part.split(/\s+as\s+/).pop() as string),
    ),
    ...[
      ...door.text.matchAll(/export\s+(?:async\s+)?(?:function|const|class|interface|type|enum)\s+(\w+)/g),
    ].map((match) => match[1] as string),
  ];

  /**
   * A door's exports that no `src/` file outside its room uses, `<door> <name>`: used means named in a
   * file that imports the door (statically, for a type, or with `import()`). Tests may import a room's
   * files directly, so they do not count.
   */
  const unusedDoorExports = (files: SourceFile[], rooms: string[]) =>
    rooms.flatMap((room) => {
      const door = files.find((file) => file.path === `${room}/index.ts`);
      if (!door) return [];
      const users = files.filter(
        (file) => folderOf(file.path) !== room && importsOf(file).includes(door.path),
      );
      return doorExports(door)
        .filter((name) => !users.some((user) => new RegExp(`\\b${name}\\b`).test(user.text)))
        .map((name) => `${door.path} ${name}`);
    });

  it('a door exports only what another room or a composition root uses', () => {
    expect(unusedDoorExports(FILES, ROOMS)).toEqual([]);
  });

  it('the check itself sees an export nobody outside the room uses, and counts a dynamic import', () => {
    const files = [
      {
        path: 'jobs/index.ts',
        text:
          "export { listJobs, type Job, cancelJob as cancel, unused } from './jobs.js';\n" +
          "export type { JobRow } from './sql.js';\nexport async function own() {}",
      },
      { path: 'jobs/runner.ts', text: "import { unused } from './jobs.js'; // its own room: not a use" },
      { path: 'ledger/x.ts', text: "import { listJobs, type Job } from '../jobs/index.js';" },
      { path: 'app.ts', text: "const { cancel } = await import('./jobs/index.js');" },
      { path: 'keys/y.ts', text: 'const own = 1; // names it without importing the door' },
    ];
    expect(unusedDoorExports(files, ['jobs'])).toEqual([
      'jobs/index.ts unused',
      'jobs/index.ts JobRow',
      'jobs/index.ts own',
    ]);
  });

  /** A room's files that import the room's own door: the door is for the other rooms. */
  const ownDoorImports = (files: SourceFile[]) =>
    files.flatMap((file) => {
      const room = folderOf(file.path);
      if (room === null || file.path === `${room}/index.ts`) return [];
      return importsOf(file)
        .filter((target) => target === `${room}/index.ts`)
        .map((target) => `${file.path} -> ${target}`);
    });

  it("a room's own files do not import its door", () => {
    expect(ownDoorImports(FILES)).toEqual([]);
  });

  it('the check itself sees a room that imports its own door', () => {
    const files = [
      { path: 'keys/feature.ts', text: "import { Authenticator } from './index.js';" },
      { path: 'keys/index.ts', text: "export { Authenticator } from './authenticate.js';" },
    ];
    expect(ownDoorImports(files)).toEqual(['keys/feature.ts -> keys/index.ts']);
  });
});

describe('the ground floor', () => {
  /** Folders below every room: they import no feature's file, not even a door or a type. */
  const LOW = ['lib', 'db', 'queue'];
  const FEATURES = [...new Set(FILES.map((f) => folderOf(f.path)))].filter(
    (folder): folder is string => folder !== null && FILES.some((f) => f.path === `${folder}/feature.ts`),
  );

  const lowOffenders = (files: SourceFile[]) =>
    files
      .filter((file) => LOW.includes(folderOf(file.path) ?? ''))
      .flatMap((file) =>
        importsOf(file)
          .filter((target) => FEATURES.includes(folderOf(target) ?? ''))
          .map((target) => `${file.path} -> ${target}`),
      );

  it('lib/, db/ and queue/ import no feature', () => {
    expect(lowOffenders(FILES)).toEqual([]);
  });

  it('the check itself sees a low folder that imports a feature', () => {
    const violation = { path: 'queue/queue.ts', text: "import type { Log } from '../webhooks/index.js';" };
    expect(lowOffenders([violation])).toEqual(['queue/queue.ts -> webhooks/index.ts']);
  });

  /** The root files below the rooms: the Feature type, the context, the log, the core settings, the errors, the fees. */
  const GROUND = ['feature.ts', 'context.ts', 'logger.ts', 'core-settings.ts', 'errors.ts', 'fees.ts'];

  /** What a ground-floor root file imports of a feature or of another root file above the ground. */
  const groundOffenders = (files: SourceFile[]) =>
    files
      .filter((file) => GROUND.includes(file.path))
      .flatMap((file) =>
        importsOf(file)
          .filter((target) => FEATURES.includes(folderOf(target) ?? '') || folderOf(target) === null)
          .filter((target) => !GROUND.includes(target))
          .map((target) => `${file.path} -> ${target}`),
      );

  it('feature.ts, context.ts, logger.ts, core-settings.ts, errors.ts and fees.ts import no feature and no composition root', () => {
    expect(groundOffenders(FILES)).toEqual([]);
  });

  it('the check itself sees a ground-floor file that imports a feature or a root above it', () => {
    const files = [
      { path: 'context.ts', text: "import type { Principal } from './keys/index.js';" },
      { path: 'logger.ts', text: "import type { Config } from './config.js';" },
      {
        path: 'feature.ts',
        text: "import type { Log } from './logger.js';\nimport type { Clock } from './lib/clock.js';",
      },
    ];
    expect(groundOffenders(files)).toEqual(['context.ts -> keys/index.ts', 'logger.ts -> config.ts']);
  });
});

describe('the tables', () => {
  /** Every table the migrations leave (created and not dropped), in the order they are created. */
  const migratedTables = (migrations: string[]) => {
    const tables: string[] = [];
    for (const text of migrations) {
      const sql = text.replace(/--[^\n]*/g, '');
      for (const match of sql.matchAll(
        /\b(CREATE\s+(?:UNLOGGED\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?|DROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?)(\w+)/gi,
      )) {
        const name = (match[2] as string).toLowerCase();
        if (/^CREATE/i.test(match[1] as string)) tables.push(name);
        else tables.splice(tables.indexOf(name), 1);
      }
    }
    return tables;
  };
  const MIGRATIONS = readdirSync(join(SRC, 'db/migrations'))
    .filter((name) => name.endsWith('.sql'))
    .sort()
    .map((name) => readFileSync(join(SRC, 'db/migrations', name), 'utf8'));
  const TABLES = migratedTables(MIGRATIONS);

  /** Tables of the mechanisms below the rooms, which have no descriptor to name them. */
  const MECHANISM_TABLES: Record<string, string> = {
    instance_settings: 'db', // the instance's own settings, read before any room (db/instance-settings.ts)
    task_leases: 'queue', // the periodic tasks' leases (queue/lease.ts)
  };

  /** Each table's owner, `table -> room`: what each descriptor's `tables` names, and the mechanisms'. */
  const ownersOf = (files: SourceFile[]) => {
    const owners = new Map<string, string[]>();
    const own = (table: string, owner: string) => owners.set(table, [...(owners.get(table) ?? []), owner]);
    for (const file of files.filter((f) => /^[^/]+\/feature\.ts$/.test(f.path))) {
      const list = /\btables:\s*\[([^\]]*)\]/.exec(file.text)?.[1] ?? '';
      for (const match of list.matchAll(/'(\w+)'/g)) own(match[1] as string, folderOf(file.path) as string);
    }
    for (const [table, owner] of Object.entries(MECHANISM_TABLES)) own(table, owner);
    return owners;
  };

  /** Tables without exactly one owner, and owners' tables no migration leaves. */
  const ownershipProblems = (tables: string[], owners: Map<string, string[]>) => [
    ...tables
      .filter((table) => (owners.get(table) ?? []).length !== 1)
      .map((table) => `${table}: ${(owners.get(table) ?? []).join(', ') || 'no owner'}`),
    ...[...owners.keys()]
      .filter((table) => !tables.includes(table))
      .map((table) => `${table}: no such table`),
  ];

  it('every table the migrations leave has exactly one owner, named in its descriptor', () => {
    expect(TABLES.length).toBeGreaterThan(30);
    expect(ownershipProblems(TABLES, ownersOf(FILES))).toEqual([]);
  });

  it('the check itself sees a table without an owner, one with two, and a stale name', () => {
    const tables = migratedTables([
      'CREATE TABLE jobs (id text);\nCREATE TABLE runs (id text);\n-- CREATE TABLE noted (id text)',
      'CREATE TABLE gone (id text);\nDROP TABLE gone;\nCREATE UNLOGGED TABLE IF NOT EXISTS marks (id text);',
    ]);
    expect(tables).toEqual(['jobs', 'runs', 'marks']);
    const files = [
      { path: 'jobs/feature.ts', text: "name: 'jobs',\n  tables: ['jobs', 'runs', 'old'],\n" },
      { path: 'ledger/feature.ts', text: "name: 'ledger',\n  tables: ['runs'],\n" },
    ];
    expect(ownershipProblems(tables, ownersOf(files))).toEqual([
      'runs: jobs, ledger',
      'marks: no owner',
      'old: no such table',
      'instance_settings: no such table',
      'task_leases: no such table',
    ]);
  });

  /**
   * Where a room's SQL names another room's table, `<room> <table>` (`<file>` for a root file), with
   * the reason: the one statement that must read or write both, or the move still to make. Any other
   * use goes through the owner's door (docs/architecture.md#one-owner-per-table).
   */
  const SHARED_TABLES: Record<string, string> = {
    'ledger accounts':
      "the balance is the account row's column: a charge checks and moves it in one guarded statement (the hot path)",
    'ledger idempotency_keys':
      "a keyed charge stores its answer in the charge's own statement, one round trip (docs/performance.md#the-hot-path)",
    'ledger deposits':
      'the history shows a deposit entry with its chain details in one page read; deposits sits above the ledger and accounts, whose `sibyl accounts transactions` prints the same page (a command is handed no ports)',
    'keys accounts':
      "verifying a key reads its account's mode and status in the same statement; a new key locks its account",
    'accounts auth_changes':
      "a suspension is recorded on the keys' revocation feed in the status change's transaction; accounts sits below keys",
  };

  /** The SQL keywords after which a table is named (upper case, as the house writes SQL, so that prose is not read as SQL). */
  const tablesNamed = (text: string, tables: string[]) =>
    tables.filter((table) =>
      new RegExp(`\\b(?:FROM|JOIN|INTO|UPDATE|TABLE|USING)\\s+${table}\\b`).test(text),
    );

  /** Each use of a table by a room (or root file) that does not own it, `<room> <table>`. */
  const foreignTables = (files: SourceFile[], tables: string[], owners: Map<string, string[]>) => [
    ...new Set(
      files.flatMap((file) => {
        const room = folderOf(file.path) ?? file.path;
        return tablesNamed(file.text, tables)
          .filter((table) => !(owners.get(table) ?? []).includes(room))
          .map((table) => `${room} ${table}`);
      }),
    ),
  ];

  it("a room's SQL names only its own tables, but the uses named with their reason", () => {
    const found = foreignTables(FILES, TABLES, ownersOf(FILES));
    expect(found.filter((use) => !(use in SHARED_TABLES))).toEqual([]);
    // No stale entry: each named use is still there.
    expect(Object.keys(SHARED_TABLES).filter((use) => !found.includes(use))).toEqual([]);
  });

  it("the check itself sees another room's table in a statement, and lets prose and the owner pass", () => {
    const owners = new Map([
      ['scheduled_jobs', ['jobs']],
      ['accounts', ['accounts']],
    ]);
    const files = [
      {
        path: 'jobs/sql.ts',
        text: 'SELECT j.id FROM scheduled_jobs j JOIN accounts a ON a.id = j.account_id',
      },
      { path: 'ledger/sql.ts', text: '`UPDATE accounts SET balance_micros = 0`' },
      { path: 'first-start.ts', text: "'SELECT EXISTS (SELECT 1 FROM accounts)'" },
      { path: 'keys/keys.ts', text: '// the key is read from accounts first; INSERT INTO scheduled_jobs_x' },
      { path: 'accounts/sql.ts', text: 'INSERT INTO accounts (id) VALUES ($1)' },
    ];
    expect(foreignTables(files, ['scheduled_jobs', 'accounts'], owners)).toEqual([
      'jobs accounts',
      'ledger accounts',
      'first-start.ts accounts',
    ]);
  });
});

describe('the verbs', () => {
  /**
   * The doors' exported functions whose first parameter is the database itself (`Database`, `Queryable`,
   * `Transaction`) rather than a `Context` (docs/architecture.md#verb-shape): each one named here with
   * the kind that keeps it so. Any other is an ordinary verb and takes `(ctx, input)`.
   */
  const IN_TRANSACTION =
    "a statement in the transaction its caller holds (the caller's Queryable), committing or rolling back with the caller's own rows";
  const EDGE =
    'the billing edge (gate/billing/), per request with the pool and no Context: the measured hot path';
  const BUILT_ONCE = 'a constructor or start-up step handed the pool once, not a verb a principal calls';
  const DATABASE_FIRST: Record<string, string> = {
    'attestations/index.ts createAttestations': BUILT_ONCE,
    'idempotency/index.ts classifyHeldKey': EDGE,
    'idempotency/index.ts heldKeyAnswer': EDGE,
    'idempotency/index.ts releaseKey': EDGE,
    'idempotency/index.ts storeAnswer': IN_TRANSACTION,
    'idempotency/index.ts storeNewAnswers': IN_TRANSACTION,
    'ledger/index.ts balanceOf': EDGE,
    'ledger/index.ts noteRefusal': EDGE,
    'ledger/index.ts charge': IN_TRANSACTION,
    'ledger/index.ts directBiller': BUILT_ONCE,
    'ledger/index.ts refundCharge': IN_TRANSACTION,
    'limits/index.ts countAgainstQuotas': IN_TRANSACTION,
    'markets/index.ts loadDemoMarkets': BUILT_ONCE,
    'webhooks/index.ts localDevelopment': BUILT_ONCE,
    'webhooks/index.ts recordAccountEvent': IN_TRANSACTION,
    'webhooks/index.ts recordAccountEvents': IN_TRANSACTION,
  };

  /**
   * Each door's exported functions whose first parameter is typed `Database`, `Queryable` or
   * `Transaction`, `<door> <name>`: the door's own functions and those it re-exports by name from its
   * room's files (`export { a, b as c } from './f.js'`).
   */
  const databaseFirst = (files: SourceFile[]) => {
    const byPath = new Map(files.map((file) => [file.path, file]));
    const dbFirst = (text: string, name: string) =>
      new RegExp(
        `export\\s+(?:async\\s+)?function\\s+${name}\\s*(?:<[^(]*>)?\\(\\s*\\w+\\??\\s*:\\s*(?:Database|Queryable|Transaction)\\b` +
          `|export\\s+const\\s+${name}\\s*=\\s*(?:async\\s*)?\\(\\s*\\w+\\??\\s*:\\s*(?:Database|Queryable|Transaction)\\b`,
      ).test(text);
    return files
      .filter((file) => /^[^/]+\/index\.ts$/.test(file.path))
      .flatMap((door) => {
        const own = [...door.text.matchAll(/export\s+(?:async\s+)?(?:function|const)\s+(\w+)/g)]
          .map((match) => match[1] as string)
          .filter((name) => dbFirst(door.text, name));
        const reexported = [...door.text.matchAll(/export\s*\{([^}]*)\}\s*from\s*'(\.\/[^']+)'/g)].flatMap(
          (match) => {
            const source = byPath.get(
              join(dirname(door.path), (match[2] as string).replace(/\.js$/, '.ts'))
                .split(sep)
                .join('/'),
            );
            return (match[1] as string)
              .split(',')
              .map((part) => part.trim())
              .filter((part) => part !== '' && !part.startsWith('type '))
              .flatMap((part) => {
                const [name, alias] = part.split(/\s+as\s+/) as [string, string | undefined];
                return source && dbFirst(source.text, name) ? [alias ?? name] : [];
              });
          },
        );
        return [...own, ...reexported].map((name) => `${door.path} ${name}`);
      });
  };

  it("a door's verb takes a Context first, but those named with their kind", () => {
    const found = databaseFirst(FILES);
    expect(found.length).toBeGreaterThan(10);
    expect(found.filter((verb) => !(verb in DATABASE_FIRST))).toEqual([]);
    // No stale entry: each named one still takes the database first.
    expect(Object.keys(DATABASE_FIRST).filter((verb) => !found.includes(verb))).toEqual([]);
  });

  it('the check itself sees a verb that takes the database first, re-exported or the door’s own', () => {
    const files = [
      {
        path: 'jobs/index.ts',
        text: "export { listJobs, type Job, cancelJob as cancel } from './jobs.js';\nexport function own(db: Database) {}",
      },
      {
        path: 'jobs/jobs.ts',
        text:
          'export async function listJobs(ctx: Context, input: Query) {}\n' +
          'export async function cancelJob(tx: Queryable, id: string) {}',
      },
    ];
    expect(databaseFirst(files)).toEqual(['jobs/index.ts own', 'jobs/index.ts cancel']);
  });
});

describe('the database through the context', () => {
  /**
   * Uses of a context's pool (`ctx.db`) outside `src/context.ts` that are justified, `<file> <use>`, with
   * the reason. Any other reaches the database through `queryable(ctx)` or `withTransaction(ctx, …)`,
   * so that a verb called inside a transaction runs in it (docs/architecture.md#verb-shape).
   */
  const POOL_USES: Record<string, string> = {
    'markets/cli.ts ingestText(ctx.db':
      "a command's context, never in a transaction: ingestion commits chunk by chunk in transactions of its own",
    'markets/cli.ts loadDemoMarkets(ctx.db':
      "a command's context, never in a transaction: the demo load (built once, as at first start) takes the pool",
    'markets/lifecycle/status.ts listedMarketsChanged(ctx.db':
      "the pool only names this process's market list caches (no statement runs on it), after the transaction",
  };

  /** Each use of `ctx.db` outside the context itself, `<file> <use>`: the call it is handed to, or what it calls. */
  const poolUses = (files: SourceFile[]) =>
    files
      .filter((file) => file.path !== 'context.ts')
      .flatMap((file) => [
        ...new Set(
          [...file.text.matchAll(/(?:\w+\()?\bctx\.db\b(?:\.\w+)?/g)].map((m) => `${file.path} ${m[0]}`),
        ),
      ]);

  it('a verb reaches the database through its context (queryable, withTransaction), never ctx.db, but those named', () => {
    const found = poolUses(FILES);
    expect(found.filter((use) => !(use in POOL_USES))).toEqual([]);
    // No stale entry: each named use is still there.
    expect(Object.keys(POOL_USES).filter((use) => !found.includes(use))).toEqual([]);
  });

  it('the check itself sees a query on the pool and the pool handed on, and lets the context pass', () => {
    const files = [
      { path: 'ledger/history.ts', text: 'const rows = await ctx.db.query<Row>(sql.HISTORY, [id]);' },
      { path: 'jobs/schedule.ts', text: 'await callbacks.deliveryView(ctx.db, id);\nconst db = ctx.db;' },
      {
        path: 'keys/keys.ts',
        text: 'await queryable(ctx).query(sql.FIND, [id]); await ctx.tx.query(sql.X);',
      },
      { path: 'context.ts', text: 'return ctx.tx ?? ctx.db;' },
    ];
    expect(poolUses(files)).toEqual([
      'ledger/history.ts ctx.db.query',
      'jobs/schedule.ts deliveryView(ctx.db',
      'jobs/schedule.ts ctx.db',
    ]);
  });
});

describe('money', () => {
  /**
   * Money moves in the ledger's guarded statements only (docs/architecture.md#the-context-and-transactions):
   * a statement elsewhere that writes an entry or a balance would skip the ledger's invariants (the
   * chained balances, one deposit per reference, refunds at most once).
   */
  const MONEY_WRITE =
    /INSERT\s+INTO\s+ledger_entries|UPDATE\s+ledger_entries|DELETE\s+FROM\s+ledger_entries|SET\s+balance_micros|balance_micros\s*=\s*balance_micros/i;

  /** The files, but the ledger's statements, that write an entry or a balance. */
  const moneyWriters = (files: SourceFile[]) =>
    files
      .filter((file) => file.path !== 'ledger/sql.ts' && MONEY_WRITE.test(file.text))
      .map((file) => file.path);

  it("only the ledger's statements (src/ledger/sql.ts) write ledger entries or balances", () => {
    expect(moneyWriters(FILES)).toEqual([]);
  });

  it('the check itself sees such a statement, in another room or elsewhere in the ledger', () => {
    expect(MONEY_WRITE.test('`UPDATE accounts SET balance_micros = balance_micros + $2 WHERE id = $1`')).toBe(
      true,
    );
    expect(MONEY_WRITE.test('INSERT INTO ledger_entries (account_id) VALUES ($1)')).toBe(true);
    expect(MONEY_WRITE.test('SELECT balance_micros FROM accounts')).toBe(false);
    const files = [
      {
        path: 'deposits/book.ts',
        text: 'const CREDIT = `INSERT INTO ledger_entries (account_id) VALUES ($1)`;',
      },
      { path: 'ledger/deposit-batch.ts', text: 'const C = `UPDATE accounts SET balance_micros = $2`;' },
      {
        path: 'ledger/sql.ts',
        text: 'export const C = `INSERT INTO ledger_entries (account_id) VALUES ($1)`;',
      },
    ];
    expect(moneyWriters(files)).toEqual(['deposits/book.ts', 'ledger/deposit-batch.ts']);
  });
});

describe('Redis', () => {
  /** Files, but the one factory (`lib/redis.ts`), that make a Redis client or import ioredis for more than a type. */
  const redisClientMakers = (files: SourceFile[]) =>
    files
      .filter(
        (file) =>
          file.path !== 'lib/redis.ts' &&
          (/new\s+Redis\s*\(/.test(file.text) || /import\s+(?!type\b)[^;]*from\s+'ioredis'/.test(file.text)),
      )
      .map((file) => file.path);

  it('only lib/redis.ts makes a Redis client: one set of options for every use', () => {
    expect(redisClientMakers(FILES)).toEqual([]);
  });

  it('the check itself sees a client made elsewhere, and lets a type import pass', () => {
    const files = [
      { path: 'limits/x.ts', text: "import { Redis } from 'ioredis';" },
      { path: 'markets/y.ts', text: 'const r = new Redis(url, {});' },
      { path: 'streams/z.ts', text: "import type { Redis } from 'ioredis';" },
      { path: 'lib/redis.ts', text: "import { Redis } from 'ioredis';\nnew Redis(url);" },
    ];
    expect(redisClientMakers(files)).toEqual(['limits/x.ts', 'markets/y.ts']);
  });
});

describe('small files', () => {
  const longFiles = (files: SourceFile[]) =>
    files
      .filter((file) => file.text.split('\n').length > 400)
      .map((file) => `${file.path}: ${file.text.split('\n').length} lines`);

  it('no src/ file passes 400 lines', () => {
    expect(longFiles(FILES)).toEqual([]);
  });

  it('the check itself sees a file of 401 lines, and lets one of 400 pass', () => {
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `export const x${i} = ${i};`).join('\n');
    expect(
      longFiles([
        { path: 'jobs/long.ts', text: lines(401) },
        { path: 'jobs/ok.ts', text: lines(400) },
      ]),
    ).toEqual(['jobs/long.ts: 401 lines']);
  });
});
