import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { loadMigrations, type Migration, MigrationError, migrate } from '../../src/db/migrate.js';
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

function fakeMigrations(sqls: string[]): Migration[] {
  const dir = mkdtempSync(join(tmpdir(), 'sibyl-migrations-'));
  for (const [i, sql] of sqls.entries()) {
    writeFileSync(join(dir, `${String(i + 1).padStart(4, '0')}_step_${i + 1}.sql`), sql);
  }
  return loadMigrations(`${dir}/`);
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
    const all = loadMigrations();
    const owners = all.find((m) => m.name === 'wallet_owners')?.version ?? 0;
    await migrate(
      db,
      all.filter((m) => m.version < owners),
    );
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

  it('refuses badly named files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sibyl-migrations-'));
    writeFileSync(join(dir, 'add-table.sql'), 'SELECT 1');
    expect(() => loadMigrations(`${dir}/`)).toThrow(MigrationError);
  });
});
