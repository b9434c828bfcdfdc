import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { PgliteDatabase } from '../../src/db/pglite.js';
import { PostgresDatabase } from '../../src/db/postgres.js';
import { randomBase62 } from '../../src/lib/ids.js';
import { withDatabase } from './global-setup.js';

export interface TestDatabase {
  db: Database;
  /** PostgreSQL: the URL of this database; PGlite: the data directory. */
  location: string;
  close(): Promise<void>;
}

export const usingPostgres = Boolean(process.env.TEST_DATABASE_URL);

/** A new, migrated database for one test file: PostgreSQL when TEST_DATABASE_URL is set, else PGlite. */
export async function createTestDatabase(options: { poolSize?: number } = {}): Promise<TestDatabase> {
  const url = process.env.TEST_DATABASE_URL;
  if (url) {
    const name = `sibyl_test_${randomBase62(10).toLowerCase()}`;
    const admin = new PostgresDatabase(url, { poolSize: 1 });
    await admin.exec(`CREATE DATABASE "${name}" TEMPLATE "${inject('postgresTemplate')}"`);
    await admin.close();
    const location = withDatabase(url, name);
    const db = new PostgresDatabase(location, { poolSize: options.poolSize ?? 20 });
    return {
      db,
      location,
      async close() {
        await db.close();
        const dropper = new PostgresDatabase(url, { poolSize: 1 });
        await dropper.exec(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        await dropper.close();
      },
    };
  }
  const dir = copyPgliteTemplate();
  const { db } = await PgliteDatabase.open(dir);
  return {
    db,
    location: dir,
    async close() {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A private copy of the migrated PGlite template (or the unmigrated one), as a data directory. */
export function copyPgliteTemplate(which: 'migrated' | 'empty' = 'migrated'): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'sibyl-test-')), 'data');
  cpSync(inject(which === 'migrated' ? 'pgliteTemplate' : 'pgliteEmptyTemplate'), dir, { recursive: true });
  return dir;
}
