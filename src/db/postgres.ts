import pg from 'pg';
import { closeCommitScope, openCommitScope } from './after-commit.js';
import type { Database, Queryable, Row, Sql } from './database.js';
import { PgListener } from './pg-listener.js';

const INT8_OID = 20;

// Per-pool parsers so that loading this module changes nothing global in `pg`.
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID) return (value: string) => BigInt(value);
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

function toConfig(sql: Sql, params: readonly unknown[] | undefined): pg.QueryConfig {
  if (typeof sql === 'string') return { text: sql, values: params as unknown[] };
  return sql.name
    ? { name: sql.name, text: sql.text, values: params as unknown[] }
    : { text: sql.text, values: params as unknown[] };
}

class PgQueryable implements Queryable {
  constructor(private readonly client: pg.Pool | pg.PoolClient) {}

  async query<R = Row>(sql: Sql, params?: readonly unknown[]): Promise<R[]> {
    const result = await this.client.query(toConfig(sql, params));
    return result.rows as R[];
  }

  async exec(script: string): Promise<void> {
    await this.client.query(script);
  }
}

export class PostgresDatabase implements Database {
  readonly kind = 'postgres' as const;
  private readonly pool: pg.Pool;
  private readonly root: PgQueryable;
  private readonly listener: PgListener;

  constructor(url: string, options: { poolSize?: number; applicationName?: string } = {}) {
    this.pool = new pg.Pool({
      connectionString: url,
      max: options.poolSize ?? 10,
      types,
      application_name: options.applicationName ?? 'sibyl',
      connectionTimeoutMillis: 10_000,
      idleTimeoutMillis: 30_000,
    });
    // An idle client that loses its connection must not crash the process; the pool replaces it.
    this.pool.on('error', () => {});
    this.root = new PgQueryable(this.pool);
    this.listener = new PgListener({
      connectionString: url,
      application_name: `${options.applicationName ?? 'sibyl'}-listen`,
      connectionTimeoutMillis: 10_000,
    });
  }

  query<R = Row>(sql: Sql, params?: readonly unknown[]): Promise<R[]> {
    return this.root.query<R>(sql, params);
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const tx = new PgQueryable(client);
      openCommitScope(tx);
      let committed = false;
      try {
        const result = await fn(tx);
        await client.query('COMMIT');
        committed = true;
        return result;
      } finally {
        closeCommitScope(tx, committed);
      }
    } catch (err) {
      try {
        await client.query('ROLLBACK');
      } catch (rollbackError) {
        broken = rollbackError as Error;
      }
      throw err;
    } finally {
      // A client whose rollback failed is in an unknown state: destroy it rather than reuse it.
      client.release(broken);
    }
  }

  exec(script: string): Promise<void> {
    return this.root.exec(script);
  }

  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>> {
    return this.listener.listen(channel, onNotify);
  }

  async close(): Promise<void> {
    await this.listener.close();
    await this.pool.end();
  }
}
