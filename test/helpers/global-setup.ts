import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { loadMigrations, migrate } from '../../src/db/migrate.js';
import { PgliteDatabase } from '../../src/db/pglite.js';
import { PostgresDatabase } from '../../src/db/postgres.js';

/**
 * Written into both PGlite templates' postgresql.conf, so that every copy opens with it. PGlite zeroes
 * its shared memory at each open, about 3.5 ms of CPU per MB on Node.js 20: the default buffer pool,
 * 128 MB, cost each open ~0.45 s more than 16 MB, which holds a test file's data many times over
 * (docs/testing.md#where-the-time-goes). The service keeps PostgreSQL's default.
 */
const PGLITE_TEMPLATE_SETTINGS = 'shared_buffers = 16MB\n';

/**
 * What the templates are besides their schema, in their cache key: a template built before a change
 * here is built anew. The databases template0 and template1 are dropped: nothing opens them, and they
 * were half of the ~1,230 files that every copy copies, makes private (three times) and removes.
 */
const PGLITE_TEMPLATE_FORM = `${PGLITE_TEMPLATE_SETTINGS}without template0, template1`;

/** Ends building a PGlite template: the unused databases dropped, the settings written, closed. */
async function finishPgliteTemplate(db: PgliteDatabase, dir: string): Promise<void> {
  for (const name of ['template0', 'template1']) {
    await db.exec(`ALTER DATABASE ${name} IS_TEMPLATE false`);
    await db.exec(`DROP DATABASE ${name}`);
  }
  await db.exec('CHECKPOINT');
  await db.close();
  appendFileSync(join(dir, 'postgresql.conf'), PGLITE_TEMPLATE_SETTINGS);
}

/**
 * Builds a migrated database template once per run; every test file then copies it. A fresh
 * PGlite costs ~4 s to initialise, a copy ~0.3 s; on PostgreSQL, CREATE DATABASE … TEMPLATE is a
 * file copy.
 */
export default async function setup(project: TestProject): Promise<void> {
  const migrations = loadMigrations();
  // Each migration's number and name too: a migration renumbered keeps its checksum, and a template
  // built before would record it under its old number.
  const hash = createHash('sha256')
    .update(migrations.map((m) => `${m.version}_${m.name}:${m.checksum}`).join(','))
    .update(PGLITE_TEMPLATE_FORM)
    .digest('hex')
    .slice(0, 12);

  const cacheDir = join(process.cwd(), 'node_modules', '.cache', 'sibyl-test');
  const templateDir = join(cacheDir, `pglite-${hash}`);
  if (!existsSync(templateDir)) {
    mkdirSync(cacheDir, { recursive: true });
    const building = `${templateDir}.${process.pid}`;
    rmSync(building, { recursive: true, force: true });
    const { db } = await PgliteDatabase.open(building);
    await migrate(db, migrations);
    await finishPgliteTemplate(db, building);
    publish(building, templateDir);
  }
  project.provide('pgliteTemplate', templateDir);

  // An initialised but unmigrated data directory, for the tests of migrations themselves: a copy
  // opens in ~0.4 s where a fresh PGlite initialises in ~4 s (more on a loaded machine).
  const formHash = createHash('sha256').update(PGLITE_TEMPLATE_FORM).digest('hex').slice(0, 8);
  const emptyDir = join(cacheDir, `pglite-empty-${pgliteVersion()}-${formHash}`);
  if (!existsSync(emptyDir)) {
    const building = `${emptyDir}.${process.pid}`;
    rmSync(building, { recursive: true, force: true });
    const { db } = await PgliteDatabase.open(building);
    await finishPgliteTemplate(db, building);
    publish(building, emptyDir);
  }
  project.provide('pgliteEmptyTemplate', emptyDir);

  const url = process.env.TEST_DATABASE_URL;
  if (url) {
    const templateName = `sibyl_template_${hash}`;
    const admin = new PostgresDatabase(url, { poolSize: 1 });
    try {
      const [exists] = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [templateName]);
      if (!exists) {
        const building = `${templateName}_${process.pid}`;
        await admin.exec(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
        await admin.exec(`CREATE DATABASE "${building}"`);
        const target = new PostgresDatabase(withDatabase(url, building), { poolSize: 1 });
        try {
          await migrate(target, migrations);
        } finally {
          await target.close();
        }
        await admin.exec(`ALTER DATABASE "${building}" RENAME TO "${templateName}"`);
      }
    } finally {
      await admin.close();
    }
    project.provide('postgresTemplate', templateName);
  } else {
    project.provide('postgresTemplate', '');
  }
}

/** The installed PGlite's version: a data directory belongs to the PostgreSQL build that made it. */
function pgliteVersion(): string {
  const manifest = JSON.parse(
    readFileSync(join(process.cwd(), 'node_modules', '@electric-sql', 'pglite', 'package.json'), 'utf8'),
  ) as { version: string };
  return manifest.version;
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string;
    pgliteEmptyTemplate: string;
    postgresTemplate: string;
  }
}

/**
 * Moves a built directory into place. Two runs started together (two worktrees' `npm test`, or a
 * file run beside the suite) both build; the one that loses the rename uses the winner's copy.
 */
function publish(building: string, dest: string): void {
  try {
    renameSync(building, dest);
  } catch (error) {
    if (!existsSync(dest)) throw error;
    rmSync(building, { recursive: true, force: true });
  }
}
