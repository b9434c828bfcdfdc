import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite, types } from '@electric-sql/pglite';
import { closeCommitScope, openCommitScope } from './after-commit.js';
import { DataDirInUseError } from './data-dir.js';
import type { Database, Queryable, Row, Sql } from './database.js';
import { sqlText } from './database.js';
import { makePrivate, makePrivateDir } from './private-dir.js';

export { DataDirInUseError } from './data-dir.js';

class PgliteQueryable implements Queryable {
  constructor(private readonly target: Pick<PGlite, 'query' | 'exec'>) {}

  async query<R = Row>(sql: Sql, params?: readonly unknown[]): Promise<R[]> {
    const result = await this.target.query<R>(sqlText(sql), params as unknown[]);
    return result.rows;
  }

  async exec(script: string): Promise<void> {
    await this.target.exec(script);
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * PGlite has no inter-process locking: two processes on one data directory would corrupt it. A
 * lock file with the owner's pid keeps a second process (say, the CLI while the server runs) out.
 */
function lockDataDir(dataDir: string): () => void {
  const lockPath = join(dataDir, 'sibyl.lock');
  try {
    writeFileSync(lockPath, String(process.pid), { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const owner = Number(readFileSync(lockPath, 'utf8').trim());
    if (Number.isInteger(owner) && owner !== process.pid && isRunning(owner)) {
      throw new DataDirInUseError(
        `The embedded database in ${dataDir} is in use by process ${owner}. Stop it first, ` +
          'or run Sibyl on PostgreSQL (DATABASE_URL) to share one database between processes.',
        dataDir,
        owner,
      );
    }
    writeFileSync(lockPath, String(process.pid));
  }
  return () => rmSync(lockPath, { force: true });
}

/**
 * Embedded PostgreSQL (PGlite, PostgreSQL 18 in WebAssembly) in a data directory. One connection,
 * queries serialised; it does not fsync, so it survives a process crash but not a machine crash.
 */
export class PgliteDatabase implements Database {
  readonly kind = 'pglite' as const;
  private readonly root: PgliteQueryable;

  private constructor(
    private readonly pglite: PGlite,
    private readonly unlock: () => void,
    /** Its data directory; undefined in memory. */
    readonly dataDir: string | undefined,
    /** How many files and folders of an existing data directory were open to others, now private. */
    readonly madePrivate: number,
  ) {
    this.root = new PgliteQueryable(pglite);
  }

  /**
   * Opens (or creates) the database in `dataDir`; `undefined` keeps it in memory. The directory is
   * its owner's only (docs/operations.md#the-data-directory): made 0700, and whatever in it is open
   * to others made private, before PGlite opens it and again after (a new database's files come
   * unpacked 0666) and at close (files made while it ran).
   */
  static async open(dataDir: string | undefined): Promise<{ db: PgliteDatabase }> {
    const made = dataDir !== undefined && makePrivateDir(dataDir);
    const unlock = dataDir === undefined ? () => {} : lockDataDir(dataDir);
    try {
      const madePrivate = dataDir === undefined || made ? 0 : makePrivate(dataDir);
      const pglite = await PGlite.create({
        ...(dataDir === undefined ? {} : { dataDir }),
        parsers: { [types.INT8]: (value: string) => BigInt(value) },
      });
      if (dataDir !== undefined) makePrivate(dataDir);
      return { db: new PgliteDatabase(pglite, unlock, dataDir, madePrivate) };
    } catch (err) {
      unlock();
      throw err;
    }
  }

  query<R = Row>(sql: Sql, params?: readonly unknown[]): Promise<R[]> {
    return this.root.query<R>(sql, params);
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    let handle: Queryable | undefined;
    let committed = false;
    try {
      const result = await this.pglite.transaction((tx) => {
        handle = new PgliteQueryable(tx);
        openCommitScope(handle);
        return fn(handle);
      });
      committed = true;
      return result;
    } finally {
      if (handle) closeCommitScope(handle, committed);
    }
  }

  exec(script: string): Promise<void> {
    return this.root.exec(script);
  }

  // One session: PGlite delivers a NOTIFY to its own listeners when the transaction commits.
  async listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>> {
    return this.pglite.listen(channel, onNotify);
  }

  async close(): Promise<void> {
    try {
      await this.pglite.close();
      if (this.dataDir !== undefined) makePrivate(this.dataDir);
    } finally {
      this.unlock();
    }
  }
}
