import type { Database } from '../db/database.js';
import { migrate } from '../db/migrate.js';
import type { Output } from '../lib/command-line.js';

export async function migrateCommand(db: Database, out: Output): Promise<void> {
  const applied = await migrate(db);
  out.result(
    { applied },
    applied.length ? `Applied migrations: ${applied.join(', ')}` : 'Database is up to date',
  );
}
