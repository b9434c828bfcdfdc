import {
  accessSync,
  constants,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statfsSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
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
      rmSync(dirname(dir), { recursive: true, force: true });
    },
  };
}

/** Room a scratch folder in memory must have left: a few embedded databases (~40 MB each) per worker. */
const MEMORY_ROOM_BYTES = 2 * 1024 ** 3;
let scratch: string | undefined;

/**
 * Where tests put embedded data directories: /dev/shm when it is a memory filesystem with room to
 * spare, else the system's temporary folder. A database copied, written and removed on a disk
 * costs ~1.8 s of CPU and ~7 s on a loaded machine, in memory ~0.6 s and ~2 s (docs/testing.md#where-the-time-goes).
 * SIBYL_TEST_TMPDIR names another folder.
 */
export function scratchRoot(): string {
  if (scratch === undefined) scratch = process.env.SIBYL_TEST_TMPDIR || memoryFolder() || tmpdir();
  return scratch;
}

function memoryFolder(): string | undefined {
  try {
    accessSync('/dev/shm', constants.W_OK);
    const fs = statfsSync('/dev/shm');
    const TMPFS_MAGIC = 0x01021994;
    return fs.type === TMPFS_MAGIC && fs.bavail * fs.bsize >= MEMORY_ROOM_BYTES ? '/dev/shm' : undefined;
  } catch {
    return undefined;
  }
}

/** A new empty folder under scratchRoot(), named `prefix` and random letters. */
export function scratchFolder(prefix: string): string {
  return mkdtempSync(join(scratchRoot(), prefix));
}

/** A private copy of the migrated PGlite template (or the unmigrated one), as a data directory. */
export function copyPgliteTemplate(which: 'migrated' | 'empty' = 'migrated'): string {
  const dir = join(scratchFolder('sibyl-test-'), 'data');
  copyTree(inject(which === 'migrated' ? 'pgliteTemplate' : 'pgliteEmptyTemplate'), dir);
  return dir;
}

/** Each template's folders and files, listed once per worker: a template is never written. */
const treeListings = new Map<string, { folders: string[]; files: string[] }>();

/**
 * Copies a template's files (~630 in the migrated one): cpSync stats each file twice and chmods it after copying, which
 * made it twice the CPU of listing the tree once and copying each file (copyFileSync keeps its mode).
 */
function copyTree(from: string, to: string): void {
  let listing = treeListings.get(from);
  if (!listing) {
    const folders: string[] = [];
    const files: string[] = [];
    const visit = (relative: string) => {
      for (const entry of readdirSync(join(from, relative), { withFileTypes: true })) {
        const path = join(relative, entry.name);
        if (entry.isDirectory()) {
          folders.push(path);
          visit(path);
        } else {
          files.push(path);
        }
      }
    };
    visit('');
    listing = { folders, files };
    treeListings.set(from, listing);
  }
  mkdirSync(to, { mode: 0o700 });
  for (const folder of listing.folders) mkdirSync(join(to, folder), { mode: 0o700 });
  for (const file of listing.files) copyFileSync(join(from, file), join(to, file));
}
