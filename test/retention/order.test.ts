import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { PrunedTable } from '../../src/feature.js';
import { FEATURES } from '../../src/features.js';
import { type Orderable, pruneOrder } from '../../src/retention/order.js';
import { prunedTables } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/**
 * The order of a retention run comes from the pruned tables' own declarations (`refersTo`, `busy`),
 * and it respects the schema: a row is never pruned while a kept row's foreign key still names it.
 */

let database: TestDatabase;
/** Every foreign key of the migrated schema, `child -> parent` (the tables). */
let foreignKeys: { child: string; parent: string }[];

beforeAll(async () => {
  database = await createTestDatabase();
  foreignKeys = await database.db.query<{ child: string; parent: string }>(
    `SELECT DISTINCT c.relname AS child, p.relname AS parent
       FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid
      WHERE k.contype = 'f' AND c.oid <> p.oid`,
  );
});

afterAll(async () => {
  await database.close();
});

type Run = { name: string; prune: { table: string; dependents: readonly string[] } }[];

/**
 * Where a run of tables in this order would delete a row a kept row's foreign key names: a foreign
 * key into a pruned table whose child is neither deleted with it (a dependent of its statement) nor
 * pruned before it.
 */
function foreignKeyViolations(run: Run, keys: { child: string; parent: string }[]): string[] {
  const firstAt = (table: string) => run.findIndex((entry) => entry.prune.table === table);
  return run.flatMap((entry, at) =>
    keys
      .filter((key) => key.parent === entry.prune.table && !entry.prune.dependents.includes(key.child))
      .filter((key) => {
        const child = firstAt(key.child);
        return child === -1 || child > at;
      })
      .map((key) => `${entry.name}: ${key.child} -> ${key.parent}`),
  );
}

/** Where a table is pruned before a table whose rows name it (`refersTo`), or names a table nobody prunes. */
function referenceViolations(run: (Run[number] & { refersTo?: readonly string[] })[]): string[] {
  return run.flatMap((entry, at) =>
    (entry.refersTo ?? []).flatMap((table) => {
      const named = run.map((other, i) => ({ other, i })).filter(({ other }) => other.prune.table === table);
      if (named.length === 0) return [`${entry.name} names ${table}, which is not pruned`];
      return named.filter(({ i }) => i < at).map(({ other }) => `${other.name} before ${entry.name}`);
    }),
  );
}

describe('the order of a retention run', () => {
  it('every foreign key into a pruned table is pruned with it or before it', async () => {
    const run = await prunedTables(loadConfig({}));
    expect(run.length).toBeGreaterThan(8);
    expect(foreignKeys.length).toBeGreaterThan(5);
    expect(foreignKeyViolations(run, foreignKeys)).toEqual([]);
  });

  it('a table is pruned before every table its rows name, as the descriptors declare', async () => {
    const declared = (
      await Promise.all(FEATURES.map(async (feature) => (await feature.retention?.()) ?? []))
    ).flat();
    const byName = new Map<string, PrunedTable>(declared.map((table) => [table.name, table as PrunedTable]));
    const run = (await prunedTables(loadConfig({}))).map((table) => ({
      ...table,
      ...byName.get(table.name),
    }));
    expect(run.map((table) => table.name).sort()).toEqual([...byName.keys()].sort());
    expect(run.some((table) => (table.refersTo ?? []).length > 0)).toBe(true);
    expect(referenceViolations(run)).toEqual([]);
  });

  it('the checks themselves see a parent pruned before its child, and a stale reference', () => {
    const parent = { name: 'requests', prune: { table: 'requests', dependents: ['votes'] } };
    const child = {
      name: 'callbacks',
      prune: { table: 'callbacks', dependents: [] },
      refersTo: ['requests'],
    };
    const keys = [
      { child: 'votes', parent: 'requests' },
      { child: 'callbacks', parent: 'requests' },
    ];
    expect(foreignKeyViolations([child, parent], keys)).toEqual([]);
    expect(foreignKeyViolations([parent, child], keys)).toEqual(['requests: callbacks -> requests']);
    expect(
      foreignKeyViolations([child, { ...parent, prune: { table: 'requests', dependents: [] } }], keys),
    ).toEqual(['requests: votes -> requests']);
    expect(referenceViolations([parent, child])).toEqual(['requests before callbacks']);
    expect(referenceViolations([{ ...child, refersTo: ['gone'] }])).toEqual([
      'callbacks names gone, which is not pruned',
    ]);
  });
});

describe('pruneOrder', () => {
  const table = (name: string, more: Partial<Orderable> = {}): Orderable => ({
    name,
    prune: { table: name },
    ...more,
  });

  it('puts a table before the tables its rows name, whatever the order given', () => {
    const order = pruneOrder([table('jobs'), table('callbacks', { refersTo: ['jobs'] })]);
    expect(order.map((t) => t.name)).toEqual(['callbacks', 'jobs']);
  });

  it('puts the busiest first among the tables free to go, else keeps the order given', () => {
    const order = pruneOrder([
      table('a'),
      table('b', { busy: true }),
      table('c'),
      table('d', { busy: true, refersTo: ['b'] }),
    ]);
    expect(order.map((t) => t.name)).toEqual(['d', 'b', 'a', 'c']);
    // A table named by another is taken only after it, even when it is the busier.
    const named = pruneOrder([table('x', { busy: true }), table('y', { refersTo: ['x'] }), table('z')]);
    expect(named.map((t) => t.name)).toEqual(['y', 'x', 'z']);
  });

  it('refuses a circle of references', () => {
    expect(() => pruneOrder([table('a', { refersTo: ['b'] }), table('b', { refersTo: ['a'] })])).toThrow(
      /circle/,
    );
  });
});
