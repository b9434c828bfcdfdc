import type { Config } from '../config.js';
import type { Database } from './database.js';
import { PgliteDatabase } from './pglite.js';
import { PostgresDatabase } from './postgres.js';

export interface OpenedDatabase {
  db: Database;
  /** True when an embedded data directory was created just now (first start). */
  fresh: boolean;
}

export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'dbPoolSize'>,
): Promise<OpenedDatabase> {
  if (config.databaseUrl) {
    return { db: new PostgresDatabase(config.databaseUrl, { poolSize: config.dbPoolSize }), fresh: false };
  }
  const { db, created } = await PgliteDatabase.open(config.dataDir);
  return { db, fresh: created };
}
