import type { CoreConfig } from '../core-settings.js';
import type { Database } from './database.js';

/** The configured database: PostgreSQL at `DATABASE_URL`, else the embedded one in `SIBYL_DATA_DIR`. */
export async function openDatabase(
  config: Pick<CoreConfig, 'databaseUrl' | 'dataDir' | 'dbPoolSize'>,
): Promise<Database> {
  // Each adapter loaded only when it is the configured one: `pg` or PGlite, never both.
  if (config.databaseUrl) {
    const { PostgresDatabase } = await import('./postgres.js');
    return new PostgresDatabase(config.databaseUrl, { poolSize: config.dbPoolSize });
  }
  const { PgliteDatabase } = await import('./pglite.js');
  return (await PgliteDatabase.open(config.dataDir)).db;
}
