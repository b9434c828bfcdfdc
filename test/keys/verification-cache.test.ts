import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createContext } from '../../src/context.js';
import type { Database, Queryable, Row, Sql } from '../../src/db/database.js';
import { sqlText } from '../../src/db/database.js';
import { systemClock } from '../../src/lib/clock.js';
import { webhookOutbox } from '../../src/webhooks/outbox.js';
import { createTestContext, type TestContext, testConfig } from '../helpers/context.js';

/** Counts queries that look up keys, so "no database round trip" is measured, not assumed. */
function countingDatabase(inner: Database): Database & { keyLookups: number } {
  const counter = {
    keyLookups: 0,
    kind: inner.kind,
    async query<R = Row>(sql: Sql, params?: readonly unknown[]): Promise<R[]> {
      if (sqlText(sql).includes('FROM api_keys k LEFT JOIN accounts')) counter.keyLookups++;
      return inner.query<R>(sql, params);
    },
    exec: (script: string) => inner.exec(script),
    transaction: <T>(fn: (tx: Queryable) => Promise<T>) => inner.transaction(fn),
    listen: (channel: string, onNotify: (payload: string) => void) => inner.listen(channel, onNotify),
    close: () => inner.close(),
  };
  return counter;
}

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});

describe('key verification cache', () => {
  it('verifies a key from the database once, then from memory; concurrent misses share one lookup', async () => {
    const db = countingDatabase(ctx.database.db);
    const app = await buildApp({
      config: testConfig(),
      db,
      clock: ctx.clock,
      callbacks: webhookOutbox,
    });
    await app.ready();
    try {
      const account = await ctx.createAccount();
      const headers = { authorization: `Bearer ${account.key}` };
      const first = await Promise.all(
        Array.from({ length: 50 }, () => app.inject({ method: 'GET', url: '/api/v1/account', headers })),
      );
      expect(first.every((r) => r.statusCode === 200)).toBe(true);
      expect(db.keyLookups).toBe(1);
      for (let i = 0; i < 20; i++) await app.inject({ method: 'GET', url: '/api/v1/account', headers });
      expect(db.keyLookups).toBe(1);
      // Garbage never reaches the database.
      await app.inject({
        method: 'GET',
        url: '/api/v1/account',
        headers: { authorization: 'Bearer pk_live_x' },
      });
      expect(db.keyLookups).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('a revocation on one instance reaches another instance at its next sync', async () => {
    const other = await buildApp({
      config: testConfig({ AUTH_CACHE_TTL_MS: '3600000' }),
      db: ctx.database.db,
      clock: ctx.clock,
      callbacks: webhookOutbox,
    });
    await other.ready();
    try {
      const owner = await ctx.createAccount();
      const victim = await ctx.addKey(owner.accountId);
      const onOther = () =>
        other.inject({
          method: 'GET',
          url: '/api/v1/account',
          headers: { authorization: `Bearer ${victim.key}` },
        });
      expect((await onOther()).statusCode).toBe(200); // now cached on `other` for an hour

      const revoked = await ctx.request(owner.key, {
        method: 'DELETE',
        url: `/api/v1/keys/${victim.record.id}`,
      });
      expect(revoked.statusCode).toBe(200);
      // `other` has not synced yet: its cache still holds the key (this is the window a sync closes).
      expect((await onOther()).statusCode).toBe(200);
      await other.services.authenticator.cache.sync(ctx.database.db);
      const after = await onOther();
      expect(after.statusCode).toBe(401);
      expect(after.json().code).toBe('API_KEY_REVOKED');
    } finally {
      await other.close();
    }
  });

  it('a suspension reaches cached keys the same way, and reactivation too', async () => {
    const { setAccountStatus } = await import('../../src/accounts/accounts.js');
    const owner = await ctx.createAccount();
    const call = () => ctx.request(owner.key, { method: 'GET', url: '/api/v1/account' });
    expect((await call()).statusCode).toBe(200);
    await setAccountStatus(createContext(ctx.database.db, systemClock), {
      accountId: owner.accountId,
      status: 'suspended',
    });
    await ctx.app.services.authenticator.cache.sync(ctx.database.db);
    expect((await call()).json().code).toBe('ACCOUNT_SUSPENDED');
    await setAccountStatus(createContext(ctx.database.db, systemClock), {
      accountId: owner.accountId,
      status: 'active',
    });
    await ctx.app.services.authenticator.cache.sync(ctx.database.db);
    expect((await call()).statusCode).toBe(200);
  });

  it('a sync asked for while a poll runs still applies a change committed before it was asked', async () => {
    const { setAccountStatus } = await import('../../src/accounts/accounts.js');
    const owner = await ctx.createAccount();
    const call = () => ctx.request(owner.key, { method: 'GET', url: '/api/v1/account' });
    expect((await call()).statusCode).toBe(200); // cached
    const cache = ctx.app.services.authenticator.cache;
    await cache.sync(ctx.database.db);

    // A poll that has read the change feed, and is held before it finishes.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let feedRead = () => {};
    const read = new Promise<void>((resolve) => {
      feedRead = resolve;
    });
    const slow: Queryable = {
      async query<R = Row>(sql: Sql, params?: readonly unknown[]): Promise<R[]> {
        const rows = await ctx.database.db.query<R>(sql, params);
        if (sqlText(sql).includes('FROM auth_changes')) {
          feedRead();
          await held;
        }
        return rows;
      },
      exec: (script: string) => ctx.database.db.exec(script),
    };
    const first = cache.sync(slow);
    await read;
    await setAccountStatus(createContext(ctx.database.db, systemClock), {
      accountId: owner.accountId,
      status: 'suspended',
    });
    const second = cache.sync(ctx.database.db);
    release();
    await Promise.all([first, second]);
    expect((await call()).json().code).toBe('ACCOUNT_SUSPENDED');
  });

  it('empties itself when a sync fails, so an outage cannot keep a revoked key alive', async () => {
    const owner = await ctx.createAccount();
    await ctx.request(owner.key, { method: 'GET', url: '/api/v1/account' });
    const cache = ctx.app.services.authenticator.cache;
    expect(cache.size).toBeGreaterThan(0);
    const broken: Queryable = {
      query: async () => {
        throw new Error('connection refused');
      },
      exec: async () => {},
    };
    await expect(cache.sync(broken)).rejects.toThrow('connection refused');
    expect(cache.size).toBe(0);
  });
});

describe('key verification cache races', () => {
  it('a lookup that read before an eviction is answered but not kept', async () => {
    const { VerificationCache } = await import('../../src/keys/verification-cache.js');
    const cache = new VerificationCache<string>({ ttlMs: 60_000, maxEntries: 10, syncMs: 1000 });
    let release: (v: { value: string; accountId: string }) => void = () => {};
    const stale = cache.get('h', () => new Promise((r) => (release = r)));
    cache.evictAccount('acct_1'); // the revocation lands while the lookup is in flight
    const joined = cache.get('h', async () => ({ value: 'fresh', accountId: 'acct_1' }));
    release({ value: 'stale', accountId: 'acct_1' });
    expect(await stale).toBe('stale');
    expect(await joined).toBe('fresh'); // did not join the pre-eviction lookup
    expect(await cache.get('h', async () => ({ value: 'reloaded', accountId: 'acct_1' }))).toBe('fresh');
  });
});
