import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { systemClock } from '../../src/lib/clock.js';
import { localDevelopment } from '../../src/webhooks/local-development.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/**
 * docs/webhooks.md#local-development: only a first start of an embedded database listening on loopback turns local
 * development on (and later starts of it keep it); nothing else does. The whole start is tested
 * with a real process in test/e2e/start.test.ts.
 */

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});

const config = (env: Record<string, string>) => loadConfig({ SIBYL_DATA_DIR: '/unused', ...env });

describe('local development', () => {
  it('is turned on by a first start on loopback, kept by later ones, and by nothing else', async () => {
    const db = database.db;
    if (db.kind !== 'pglite') {
      // PostgreSQL never: not on a first start, not ever.
      expect(await localDevelopment(db, config({}), systemClock, true)).toBe(false);
      return;
    }
    // Not yet turned on: a later start alone does not.
    expect(await localDevelopment(db, config({}), systemClock, false)).toBe(false);
    // A first start listening elsewhere than loopback does not.
    expect(await localDevelopment(db, config({ HOST: '0.0.0.0' }), systemClock, true)).toBe(false);
    // An explicit setting, either way, is never overridden.
    expect(
      await localDevelopment(db, config({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' }), systemClock, true),
    ).toBe(false);
    expect(await localDevelopment(db, config({}), systemClock, false)).toBe(false);
    // The first start on loopback turns it on; later starts on loopback keep it; elsewhere, off.
    expect(await localDevelopment(db, config({ HOST: '127.0.0.1' }), systemClock, true)).toBe(true);
    expect(await localDevelopment(db, config({ HOST: 'localhost' }), systemClock, false)).toBe(true);
    expect(await localDevelopment(db, config({ HOST: '::1' }), systemClock, false)).toBe(true);
    expect(await localDevelopment(db, config({ HOST: '192.168.1.5' }), systemClock, false)).toBe(false);
    expect(
      await localDevelopment(db, config({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' }), systemClock, false),
    ).toBe(false);
  });
});
