import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { loadMigrations, type Migration, MigrationError, migrate } from '../../src/db/migrate.js';
import {
  LEGACY_CHECKSUMS,
  migrationChecksum,
  sha256,
  sqlWithoutComments,
} from '../../src/db/migration-checksum.js';
import { PgliteDatabase } from '../../src/db/pglite.js';
import { PostgresDatabase } from '../../src/db/postgres.js';
import { randomBase62 } from '../../src/lib/ids.js';
import { copyPgliteTemplate } from '../helpers/db.js';
import { withDatabase } from '../helpers/global-setup.js';

const url = process.env.TEST_DATABASE_URL;
const cleanups: (() => Promise<void>)[] = [];

afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

/** An empty database (no migrations applied), of the kind under test. */
async function emptyDatabase(connections = 1): Promise<Database[]> {
  if (url) {
    const name = `sibyl_empty_${randomBase62(8).toLowerCase()}`;
    const admin = new PostgresDatabase(url, { poolSize: 1 });
    await admin.exec(`CREATE DATABASE "${name}"`);
    await admin.close();
    const dbs = Array.from(
      { length: connections },
      () => new PostgresDatabase(withDatabase(url, name), { poolSize: 2 }),
    );
    cleanups.push(async () => {
      for (const db of dbs) await db.close();
      const dropper = new PostgresDatabase(url, { poolSize: 1 });
      await dropper.exec(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await dropper.close();
    });
    return dbs;
  }
  // A copy of an initialised, unmigrated data directory: a fresh PGlite takes seconds to initialise.
  const dir = copyPgliteTemplate('empty');
  const { db } = await PgliteDatabase.open(dir);
  cleanups.push(async () => {
    await db.close();
    rmSync(dirname(dir), { recursive: true, force: true });
  });
  return [db];
}

const LEGACY_DIR = join(dirname(fileURLToPath(import.meta.url)), 'legacy-migrations');
/** The texts of 0019–0024 as earlier releases applied them, before their comments were corrected. */
const LEGACY_FILES = new Map(
  readdirSync(LEGACY_DIR).map((file) => [
    file.slice(0, -'.sql'.length),
    readFileSync(join(LEGACY_DIR, file), 'utf8'),
  ]),
);

/** The migration `m` loaded from a different text, as loadMigrations would load it. */
function fakeMigrationLike(m: Migration, sql: string): Migration {
  const dir = mkdtempSync(join(tmpdir(), 'sibyl-migrations-'));
  writeFileSync(join(dir, `${String(m.version).padStart(4, '0')}_${m.name}.sql`), sql);
  const [loaded] = loadMigrations(`${dir}/`);
  if (!loaded) throw new Error('not loaded');
  return loaded;
}

function fakeMigrations(sqls: string[]): Migration[] {
  const dir = mkdtempSync(join(tmpdir(), 'sibyl-migrations-'));
  for (const [i, sql] of sqls.entries()) {
    writeFileSync(join(dir, `${String(i + 1).padStart(4, '0')}_step_${i + 1}.sql`), sql);
  }
  return loadMigrations(`${dir}/`);
}

/**
 * A market (with its outcomes and, optionally, trades) written by SQL, as a release before the
 * migration under test left it: the service's current statements expect the migrated schema.
 */
async function oldMarket(
  db: Database,
  id: string,
  market: { title: string; description?: string; category?: string; outcomes?: string[] },
  trades: { id: string; outcome: number; price: number; at: string }[] = [],
): Promise<void> {
  const outcomes = market.outcomes ?? ['Yes', 'No'];
  await db.query(
    `INSERT INTO market_creators (wallet, username, username_at) VALUES ('W', 'w', now()) ON CONFLICT DO NOTHING`,
  );
  await db.query(
    `INSERT INTO markets (id, slug, title, description, category, market_type, outcome_count, closes_at, fee_bps,
                          lock_period_seconds, creator_wallet, resolution_type, status, status_at, status_event,
                          created_at, search)
     VALUES ($1, $1, $2, $3, $4, 'BINARY', $5, '2027-01-01', 100, 0, 'W', 'AI', 'OPEN', now(), 'e-' || $1, now(),
             market_search_vector($2, $3, $4, $6::text[]))`,
    [
      id,
      market.title,
      market.description ?? 'A market',
      market.category ?? 'crypto',
      outcomes.length,
      outcomes,
    ],
  );
  await db.query(
    `INSERT INTO market_outcomes (market_id, outcome_index, label)
     SELECT $1, o.n - 1, o.label FROM unnest($2::text[]) WITH ORDINALITY AS o (label, n)`,
    [id, outcomes],
  );
  for (const t of trades)
    await db.query(
      `INSERT INTO market_trades (trade_id, market_id, outcome_index, price, shares, buyer, seller, at)
       VALUES ($1, $2, $3, $4, 10, 'B', 'S', $5)`,
      [t.id, id, t.outcome, t.price, t.at],
    );
}

/** Applies the migrations before `name` (a data migration's test writes old data first); all of them. */
async function migrateBefore(db: Database, name: string) {
  const all = loadMigrations();
  const version = all.find((m) => m.name === name)?.version;
  if (version === undefined) throw new Error(`no migration ${name}`);
  await migrate(
    db,
    all.filter((m) => m.version < version),
  );
  return all;
}

describe('migrations', () => {
  it('apply once, in order; a second run applies nothing', async () => {
    const [db] = (await emptyDatabase()) as [Database];
    const all = loadMigrations();
    expect(await migrate(db, all)).toEqual(all.map((m) => m.version));
    expect(await migrate(db, all)).toEqual([]);
    const rows = await db.query<{ version: number }>(
      'SELECT version FROM schema_migrations ORDER BY version',
    );
    expect(rows.map((r) => r.version)).toEqual(all.map((m) => m.version));
  });

  it('a start with every migration applied only reads: no transaction, no lock', async () => {
    const [db] = (await emptyDatabase()) as [Database];
    const all = loadMigrations();
    await migrate(db, all);
    let transactions = 0;
    const counted = new Proxy(db, {
      get(target, prop) {
        if (prop === 'transaction')
          return (fn: Parameters<Database['transaction']>[0]) => {
            transactions++;
            return target.transaction(fn);
          };
        const value = Reflect.get(target, prop);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    expect(await migrate(counted, all)).toEqual([]);
    expect(transactions).toBe(0);
    // One more migration: the locked loop runs again, and applies only it.
    const next = fakeMigrationLike({ ...(all.at(-1) as Migration), version: 9999, name: 'next' }, 'SELECT 1');
    expect(await migrate(counted, [...all, next])).toEqual([9999]);
    expect(transactions).toBe(all.length + 1);
  });

  it('are applied exactly once when several processes start at the same moment', async () => {
    const dbs = await emptyDatabase(url ? 4 : 1);
    const steps = fakeMigrations([
      'CREATE TABLE counter (n integer NOT NULL)',
      'INSERT INTO counter VALUES (1)',
      'UPDATE counter SET n = n + 1',
    ]);
    const results = await Promise.all(dbs.flatMap((db) => [migrate(db, steps), migrate(db, steps)]));
    expect(results.flat().sort()).toEqual([1, 2, 3]);
    const [row] = await (dbs[0] as Database).query<{ n: number }>('SELECT n FROM counter');
    expect(row?.n).toBe(2);
  });

  it('a failing migration stops with a readable error and leaves nothing half-done', async () => {
    const [db] = (await emptyDatabase()) as [Database];
    const steps = fakeMigrations([
      'CREATE TABLE good (id integer)',
      'CREATE TABLE half (id integer); SELECT no_such_function();',
    ]);
    const err = await migrate(db, steps).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MigrationError);
    expect((err as Error).message).toMatch(/^Migration 2_step_2 failed: .*no_such_function/);
    const [half] = await db.query(`SELECT to_regclass('half') AS t`);
    expect(half).toEqual({ t: null });
    const applied = await db.query<{ version: number }>('SELECT version FROM schema_migrations');
    expect(applied.map((r) => r.version)).toEqual([1]);
  });

  it('refuses to run when an applied migration was edited', async () => {
    const [db] = (await emptyDatabase()) as [Database];
    await migrate(db, fakeMigrations(['CREATE TABLE a (id integer)']));
    await expect(migrate(db, fakeMigrations(['CREATE TABLE a (id bigint)']))).rejects.toThrow(
      /was changed after it was applied/,
    );
  });

  it('wallet_owners keeps the earlier of two claims on one wallet and records the later one it drops', async () => {
    const [db] = (await emptyDatabase()) as [Database];
    const all = await migrateBefore(db, 'wallet_owners');
    // Before 0026, `accounts create --wallet` could take a wallet another account had linked (W1),
    // and a link racing an account's creation could take its wallet (W2); W3 is a lone link.
    await db.exec(`
      INSERT INTO accounts (id, mode, webhook_secret, created_at) VALUES
        ('acct_linker', 'live', 'x', '2026-01-01'), ('acct_cli', 'live', 'x', '2026-03-01');
      INSERT INTO accounts (id, mode, wallet_address, webhook_secret, created_at) VALUES
        ('acct_given', 'live', 'W2', 'x', '2026-01-01');
      INSERT INTO deposit_wallets (address, account_id, linked_at) VALUES
        ('W1', 'acct_linker', '2026-02-01'), ('W2', 'acct_linker', '2026-02-01'), ('W3', 'acct_linker', '2026-02-01');
      UPDATE accounts SET wallet_address = 'W1' WHERE id = 'acct_cli';`);
    await migrate(db, all);

    expect(await db.query('SELECT address, claim FROM wallet_owners ORDER BY address')).toEqual([
      { address: 'W1', claim: 'linked' },
      { address: 'W2', claim: 'sign-in' },
      { address: 'W3', claim: 'linked' },
    ]);
    expect(await db.query('SELECT id, wallet_address FROM accounts ORDER BY id')).toEqual([
      { id: 'acct_cli', wallet_address: null },
      { id: 'acct_given', wallet_address: 'W2' },
      { id: 'acct_linker', wallet_address: null },
    ]);
    expect(await db.query('SELECT address, account_id FROM deposit_wallets ORDER BY address')).toEqual([
      { address: 'W1', account_id: 'acct_linker' },
      { address: 'W3', account_id: 'acct_linker' },
    ]);
    expect(
      await db.query(
        'SELECT address, account_id, claim, claimed_at, kept_by FROM wallet_claims_dropped ORDER BY address',
      ),
    ).toEqual([
      {
        address: 'W1',
        account_id: 'acct_cli',
        claim: 'sign-in',
        claimed_at: new Date('2026-03-01T00:00:00Z'),
        kept_by: 'acct_linker',
      },
      {
        address: 'W2',
        account_id: 'acct_linker',
        claim: 'linked',
        claimed_at: new Date('2026-02-01T00:00:00Z'),
        kept_by: 'acct_given',
      },
    ]);
  });

  it('market_search_terms gives the markets created before it their terms, each rank ts_rank’s', async () => {
    const [db] = (await emptyDatabase()) as [Database];
    const all = await migrateBefore(db, 'market_search_terms');
    await oldMarket(db, 'mt-1', {
      title: 'Comet tail',
      description: "The comet's tail",
      outcomes: ['Comet', 'No'],
    });
    await oldMarket(db, 'mt-2', { title: 'Other', category: 'comet' });
    await migrate(db, all);
    const rows = await db.query<{ market_id: string; lexeme: string; rank: number }>(
      'SELECT market_id, lexeme, rank FROM market_search_terms ORDER BY market_id, lexeme',
    );
    const expected = await db.query<{ market_id: string; lexeme: string; rank: number }>(
      `SELECT m.id AS market_id, l.lexeme, ts_rank(m.search, to_tsquery('simple', l.lexeme), 32) AS rank
         FROM markets m, unnest(m.search) l ORDER BY m.id, l.lexeme COLLATE "C"`,
    );
    expect(rows).toEqual(expected);
    expect(rows.filter((r) => r.lexeme === 'comet').map((r) => r.market_id)).toEqual(['mt-1', 'mt-2']);
  });

  it('market_outcome_last gives the outcomes traded before it their newest trade by (at, trade id)', async () => {
    const [db] = (await emptyDatabase()) as [Database];
    const all = await migrateBefore(db, 'market_outcome_last');
    await oldMarket(db, 'ml-1', { title: 'Three ways', outcomes: ['Yes', 'No', 'Maybe'] }, [
      { id: 't-2', outcome: 0, price: 4_000, at: '2026-03-02T10:00:00Z' },
      { id: 't-1', outcome: 0, price: 4_100, at: '2026-03-02T10:00:00Z' }, // same time, smaller id: not the last
      { id: 't-0', outcome: 0, price: 3_900, at: '2026-03-01T10:00:00Z' },
      { id: 't-3', outcome: 1, price: 6_000, at: '2026-03-01T09:00:00Z' },
      { id: 't-4', outcome: 1, price: 5_500, at: '2026-03-01T11:00:00Z' },
    ]);
    await migrate(db, all);
    expect(
      await db.query(
        'SELECT market_id, outcome_index, price, trade_id FROM market_outcome_last ORDER BY outcome_index',
      ),
    ).toEqual([
      { market_id: 'ml-1', outcome_index: 0, price: 4_000, trade_id: 't-2' },
      { market_id: 'ml-1', outcome_index: 1, price: 5_500, trade_id: 't-4' },
    ]);
  });

  it('market_list_counts gives the markets created before it their counts per status and category', async () => {
    const [db] = (await emptyDatabase()) as [Database];
    const all = await migrateBefore(db, 'market_list_counts');
    await oldMarket(db, 'mc-1', { title: 'One' });
    await oldMarket(db, 'mc-2', { title: 'Two' });
    await oldMarket(db, 'mc-3', { title: 'Three', category: 'comet' });
    await db.query(`UPDATE markets SET status = 'CLOSED' WHERE id = 'mc-2'`);
    await migrate(db, all);
    const sums = () =>
      db.query(
        `SELECT status, category, sum(n)::int AS n FROM market_list_counts
          GROUP BY status, category HAVING sum(n) <> 0 ORDER BY status, category`,
      );
    expect(await sums()).toEqual([
      { status: 'CLOSED', category: 'crypto', n: 1 },
      { status: 'OPEN', category: 'comet', n: 1 },
      { status: 'OPEN', category: 'crypto', n: 1 },
    ]);
    await oldMarket(db, 'mc-4', { title: 'Four', category: 'comet' }); // kept from now on by the triggers
    expect(await sums()).toContainEqual({ status: 'OPEN', category: 'comet', n: 2 });
  });

  it('accepts an applied migration whose comments changed, refuses one whose SQL changed', async () => {
    const [db] = (await emptyDatabase()) as [Database];
    await migrate(db, fakeMigrations(["-- a table\nCREATE TABLE a (id integer, note text DEFAULT '--')"]));
    const reworded =
      "-- a table, with a\n-- longer comment\nCREATE TABLE a (id integer, -- the id\n  note text DEFAULT '--')\n";
    expect(await migrate(db, fakeMigrations([reworded]))).toEqual([]);
    await expect(
      migrate(db, fakeMigrations(["CREATE TABLE a (id integer, note text DEFAULT '-- x')"])),
    ).rejects.toThrow(/was changed after it was applied/);
  });

  it('a database migrated by earlier releases (whole-text checksums, old 0019–0024) upgrades cleanly', async () => {
    const [db] = (await emptyDatabase()) as [Database];
    const current = loadMigrations();
    // What an earlier release applied and recorded: the old texts, each under its whole-text sha256.
    const old: Migration[] = current.map((m) => {
      const file = LEGACY_FILES.get(`${String(m.version).padStart(4, '0')}_${m.name}`);
      const sql = file ?? m.sql;
      return { ...m, sql, checksum: sha256(sql), accepted: [sha256(sql)] };
    });
    expect(old.filter((m) => m.sql !== current.find((c) => c.version === m.version)?.sql)).toHaveLength(
      LEGACY_FILES.size,
    );
    await migrate(db, old);
    const recorded = await db.query<{ version: number; checksum: string }>(
      'SELECT version, checksum FROM schema_migrations ORDER BY version',
    );

    expect(await migrate(db, current)).toEqual([]);
    // Left as recorded, so that the previous release still starts on this database.
    expect(await db.query('SELECT version, checksum FROM schema_migrations ORDER BY version')).toEqual(
      recorded,
    );

    // A change to the SQL of one of them is still refused.
    const changed = current.map((m) =>
      m.name === 'instance_settings' ? fakeMigrationLike(m, `${m.sql}\nSELECT 1;`) : m,
    );
    await expect(migrate(db, changed)).rejects.toThrow(
      /0*24_instance_settings was changed after it was applied/,
    );
  });

  it('records the checksum of the SQL without comments on a new database', async () => {
    const [db] = (await emptyDatabase()) as [Database];
    const current = loadMigrations();
    await migrate(db, current);
    const rows = await db.query<{ version: number; checksum: string }>(
      'SELECT version, checksum FROM schema_migrations ORDER BY version',
    );
    expect(rows).toEqual(current.map((m) => ({ version: m.version, checksum: migrationChecksum(m.sql) })));
  });

  it('refuses badly named files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sibyl-migrations-'));
    writeFileSync(join(dir, 'add-table.sql'), 'SELECT 1');
    expect(() => loadMigrations(`${dir}/`)).toThrow(MigrationError);
  });
});

describe('migration checksums', () => {
  it('the legacy checksums are the whole-text sha256 of the old texts, whose SQL is the current SQL', () => {
    const current = new Map(
      loadMigrations().map((m) => [`${String(m.version).padStart(4, '0')}_${m.name}`, m.sql]),
    );
    expect([...LEGACY_FILES.keys()].sort()).toEqual(Object.keys(LEGACY_CHECKSUMS).sort());
    for (const [name, text] of LEGACY_FILES) {
      expect(sha256(text), name).toBe(LEGACY_CHECKSUMS[name]?.wholeText);
      expect(migrationChecksum(text), name).toBe(LEGACY_CHECKSUMS[name]?.sql);
      expect(text, name).not.toBe(current.get(name));
      expect(sqlWithoutComments(text), name).toBe(sqlWithoutComments(current.get(name) ?? ''));
    }
  });

  it('drop line comments and collapse whitespace outside quotes, nothing else', () => {
    expect(sqlWithoutComments('-- a\nSELECT  1, -- b\n\t2;\n')).toBe('SELECT 1, 2;');
    expect(sqlWithoutComments("SELECT '-- kept',  'it''s -- kept'")).toBe(
      "SELECT '-- kept', 'it''s -- kept'",
    );
    expect(sqlWithoutComments('SELECT "a  -- b" FROM t')).toBe('SELECT "a  -- b" FROM t');
    expect(sqlWithoutComments("SELECT E'\\' -- x', 1 -- y")).toBe("SELECT E'\\' -- x', 1");
    expect(sqlWithoutComments('AS $f$\n  -- in the body\n$f$; -- out')).toBe(
      'AS $f$\n  -- in the body\n$f$;',
    );
    expect(sqlWithoutComments('AS $$ x -- y\n $$')).toBe('AS $$ x -- y\n $$');
    expect(sqlWithoutComments("/* it's /* nested */ -- kept */ SELECT 1")).toBe(
      "/* it's /* nested */ -- kept */ SELECT 1",
    );
    // A change to a literal, a quoted name or a function body changes the checksum.
    expect(migrationChecksum("SELECT '-- a'")).not.toBe(migrationChecksum("SELECT '-- b'"));
    expect(migrationChecksum('SELECT 1 AS "x  y"')).not.toBe(migrationChecksum('SELECT 1 AS "x y"'));
    expect(migrationChecksum('AS $$ -- a\n$$')).not.toBe(migrationChecksum('AS $$ -- b\n$$'));
  });
});
