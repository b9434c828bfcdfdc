import type { CoreConfig } from '../core-settings.js';
import type { Database } from './database.js';
import { PgliteDatabase } from './pglite.js';
import { PostgresDatabase } from './postgres.js';

/** The configured database: PostgreSQL at `DATABASE_URL`, else the embedded one in `SIBYL_DATA_DIR`. */
export async function openDatabase(
  config: Pick<CoreConfig, 'databaseUrl' | 'dataDir' | 'dbPoolSize'>,
): Promise<Database> {
  if (config.databaseUrl) return new PostgresDatabase(config.databaseUrl, { poolSize: config.dbPoolSize });
  return (await PgliteDatabase.open(config.dataDir)).db;
}
