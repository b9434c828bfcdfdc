import type { Queryable } from './database.js';

/**
 * What a first start decided for this installation and every later start keeps (migration 0024),
 * one row per name, shared by every process on the database: the statements live here, and each
 * feature names its own setting.
 */

/** Records `value` for `name` unless a value is already recorded; the recorded value is kept. */
export async function recordInstanceSetting(
  db: Queryable,
  name: string,
  value: string,
  at: Date,
): Promise<void> {
  await db.query(
    'INSERT INTO instance_settings (name, value, set_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING',
    [name, value, at],
  );
}

/** The value recorded for `name`, or null. */
export async function readInstanceSetting(db: Queryable, name: string): Promise<string | null> {
  const [row] = await db.query<{ value: string }>('SELECT value FROM instance_settings WHERE name = $1', [
    name,
  ]);
  return row?.value ?? null;
}

/**
 * The value of `name`, recorded now from `make()` when there is none yet. Two processes starting at
 * once both insert; one wins, and both read its value (the read is a statement of its own, so it sees
 * the winner's commit).
 */
export async function instanceSetting(
  db: Queryable,
  name: string,
  make: () => string,
  at: Date,
): Promise<string> {
  const recorded = await readInstanceSetting(db, name);
  if (recorded !== null) return recorded;
  await recordInstanceSetting(db, name, make(), at);
  const value = await readInstanceSetting(db, name);
  if (value === null) throw new Error(`instance setting ${name} was not recorded`);
  return value;
}
