import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Database } from './database.js';
import { LEGACY_CHECKSUMS, migrationChecksum, sha256 } from './migration-checksum.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

// Any constant works; all Sibyl processes must agree on it. ("sibyl" in ASCII.)
const MIGRATION_LOCK_KEY = 0x736962796c;

export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** What is recorded when the migration is applied: the sha256 of its SQL without comments. */
  checksum: string;
  /**
   * The recorded checksums that mean "this migration, unchanged": `checksum`, the whole-text sha256
   * that earlier releases recorded, and that of the text before a comment was corrected.
   */
  accepted: readonly string[];
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

export function loadMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort();
  return files.map((file) => {
    const match = /^(\d{4})_([a-z0-9_]+)\.sql$/.exec(file);
    if (!match) throw new MigrationError(`Migration file name "${file}" is not NNNN_name.sql`);
    const sql = readFileSync(`${dir}${file}`, 'utf8');
    const checksum = migrationChecksum(sql);
    const legacy = LEGACY_CHECKSUMS[file.slice(0, -'.sql'.length)];
    return {
      version: Number(match[1]),
      name: match[2] as string,
      sql,
      checksum,
      accepted: [checksum, sha256(sql), ...(legacy?.sql === checksum ? [legacy.wholeText] : [])],
    };
  });
}

/**
 * Applies pending migrations in order, each in its own transaction. Every transaction first takes
 * the same advisory lock, so two processes starting at once apply each migration exactly once:
 * the second waits, then sees it applied. A migration whose SQL was edited after being applied, or
 * that fails, stops the caller with a readable error; a corrected comment does not (the checksum
 * leaves comments out). A recorded checksum is left as it is, so the previous release still starts.
 */
export async function migrate(db: Database, migrations: Migration[] = loadMigrations()): Promise<number[]> {
  if (await allApplied(db, migrations)) return [];
  const applied: number[] = [];
  for (const migration of migrations) {
    const didApply = await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
      await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        checksum text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
      const [existing] = await tx.query<{ checksum: string }>(
        'SELECT checksum FROM schema_migrations WHERE version = $1',
        [migration.version],
      );
      if (existing) {
        if (!migration.accepted.includes(existing.checksum)) {
          throw new MigrationError(
            `Migration ${migration.version}_${migration.name} was changed after it was applied; ` +
              'add a new migration instead of editing an applied one.',
          );
        }
        return false;
      }
      try {
        await tx.exec(migration.sql);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        throw new MigrationError(`Migration ${migration.version}_${migration.name} failed: ${message}`);
      }
      await tx.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [
        migration.version,
        migration.name,
        migration.checksum,
      ]);
      return true;
    });
    if (didApply) applied.push(migration.version);
  }
  return applied;
}

/**
 * The usual start: every migration already recorded, unchanged. Two reads, no lock, say so
 * (nothing is written, so nothing can race); anything else — a table not made yet, a migration
 * missing or changed — goes through the locked loop above, which applies or refuses as before.
 */
async function allApplied(db: Database, migrations: Migration[]): Promise<boolean> {
  const [table] = await db.query<{ present: boolean }>(
    "SELECT to_regclass('schema_migrations') IS NOT NULL AS present",
  );
  if (!table?.present) return false;
  const rows = await db.query<{ version: number; checksum: string }>(
    'SELECT version, checksum FROM schema_migrations',
  );
  const recorded = new Map(rows.map((row) => [Number(row.version), row.checksum]));
  return migrations.every((migration) => {
    const checksum = recorded.get(migration.version);
    return checksum !== undefined && migration.accepted.includes(checksum);
  });
}
