import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { createContext } from '../../src/context.js';
import type { Database } from '../../src/db/database.js';
import { loadMigrations, migrate } from '../../src/db/migrate.js';
import { PgliteDatabase } from '../../src/db/pglite.js';
import { PostgresDatabase } from '../../src/db/postgres.js';
import { ManualClock, systemClock } from '../../src/lib/clock.js';
import { randomBase62 } from '../../src/lib/ids.js';
import { webhookSecretOf } from '../../src/webhooks/account-secret.js';
import {
  ROTATION_OVERLAP_MS,
  revealWebhookSecret,
  rotateWebhookSecret,
} from '../../src/webhooks/deliveries.js';
import { signingSecrets } from '../../src/webhooks/delivery.js';
import { resealSecrets } from '../../src/webhooks/reseal.js';
import { clearSecretBox, createSecretBox } from '../../src/webhooks/secret-box.js';
import { copyPgliteTemplate, createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { withDatabase } from '../helpers/global-setup.js';

const KEY_A = Buffer.alloc(32, 1).toString('base64');
const KEY_B = Buffer.alloc(32, 2).toString('base64');

interface SecretRow {
  account_id: string;
  webhook_secret: string;
  webhook_secret_previous: string | null;
  webhook_secret_previous_until: Date | null;
}

/** The account's row of the webhooks room's table, as stored. */
async function storedSecrets(db: Database, accountId: string): Promise<SecretRow> {
  const [row] = await db.query<SecretRow>(
    `SELECT account_id, webhook_secret, webhook_secret_previous, webhook_secret_previous_until
       FROM webhook_secrets WHERE account_id = $1`,
    [accountId],
  );
  if (!row) throw new Error(`no secrets for ${accountId}`);
  return row;
}

let database: TestDatabase;
const cleanups: (() => Promise<void>)[] = [];
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
  for (const cleanup of cleanups) await cleanup();
});

describe('webhook secrets at rest', () => {
  it('seals with AES-256-GCM bound to the account: another account, or another key, cannot open it', () => {
    const box = createSecretBox({ encryptionKey: KEY_A });
    const sealed = box.seal('whsec_abc', 'acct_1');
    expect(sealed).toMatch(/^enc1:/);
    expect(sealed).not.toContain('abc');
    expect(box.open(sealed, 'acct_1')).toBe('whsec_abc');
    expect(() => box.open(sealed, 'acct_2')).toThrow();
    expect(() => createSecretBox({ encryptionKey: KEY_B }).open(sealed, 'acct_1')).toThrow();
    // Secrets stored before a key was set stay readable.
    expect(box.open('whsec_clear', 'acct_1')).toBe('whsec_clear');
    expect(() => createSecretBox({ encryptionKey: Buffer.alloc(16).toString('base64') })).toThrow(/32 bytes/);
  });

  it('a new account gets its secret in the webhooks room, sealed; an unknown account has none', async () => {
    const db = database.db;
    const box = createSecretBox({ encryptionKey: KEY_A });
    const ctx = createContext(db, systemClock);
    const account = await createAccount(ctx, { mode: 'sandbox' }, box);
    const row = await storedSecrets(db, account.id);
    expect(row.webhook_secret).toMatch(/^enc1:/);
    expect(row.webhook_secret_previous).toBeNull();
    const secret = await webhookSecretOf(ctx, box, account.id);
    expect(secret).toMatch(/^whsec_/);
    expect(box.open(row.webhook_secret, account.id)).toBe(secret);
    expect(await revealWebhookSecret(ctx, box, account.id)).toEqual({ webhookSecret: secret });
    await expect(webhookSecretOf(ctx, box, 'acct_nobody')).rejects.toMatchObject({
      code: 'ACCOUNT_NOT_FOUND',
    });
    // The account row itself holds no secret any more.
    const [columns] = await db.query<{ n: number }>(
      `SELECT count(*)::integer AS n FROM information_schema.columns
        WHERE table_name = 'accounts' AND column_name LIKE 'webhook_secret%'`,
    );
    expect(columns?.n).toBe(0);
  });

  it('rotation: the previous secret signs beside the new one for 24 hours, then alone the new one', async () => {
    const db = database.db;
    const box = createSecretBox({ encryptionKey: KEY_A });
    const clock = new ManualClock(new Date('2026-12-01T00:00:00Z'));
    const ctx = createContext(db, clock);
    const account = await createAccount(ctx, { mode: 'live' }, box);
    const before = await webhookSecretOf(ctx, box, account.id);

    const rotated = await rotateWebhookSecret(ctx, box, account.id);
    expect(rotated.webhookSecret).not.toBe(before);
    expect(rotated.previousSecretValidUntil).toBe(
      new Date(clock.now().getTime() + ROTATION_OVERLAP_MS).toISOString(),
    );
    expect(await webhookSecretOf(ctx, box, account.id)).toBe(rotated.webhookSecret);

    const row = await storedSecrets(db, account.id);
    const delivery = { ...row, secret_owner: account.id };
    expect(signingSecrets(box, delivery, clock.now())).toEqual([rotated.webhookSecret, before]);
    clock.advance(ROTATION_OVERLAP_MS);
    expect(signingSecrets(box, delivery, clock.now())).toEqual([rotated.webhookSecret]);
    await expect(rotateWebhookSecret(ctx, box, 'acct_nobody')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('rotating the key: the previous key still reads, and reseal-secrets moves every account to the new one', async () => {
    const db = database.db;
    const oldBox = createSecretBox({ encryptionKey: KEY_A });
    const clock = new ManualClock(new Date('2026-12-02T00:00:00Z'));
    const clear = await createAccount(createContext(db, clock), { mode: 'live' }, clearSecretBox);
    const sealed = await createAccount(createContext(db, clock), { mode: 'live' }, oldBox);
    const first = await webhookSecretOf(createContext(db, clock), oldBox, sealed.id);
    // A rotation's previous secret is resealed with the current one.
    await rotateWebhookSecret(createContext(db, clock), oldBox, sealed.id);
    const plain = {
      [clear.id]: [await webhookSecretOf(createContext(db, clock), clearSecretBox, clear.id), null],
      [sealed.id]: [await webhookSecretOf(createContext(db, clock), oldBox, sealed.id), first],
    };

    const rotating = createSecretBox({ encryptionKey: KEY_B, previousEncryptionKey: KEY_A });
    expect(await webhookSecretOf(createContext(db, clock), rotating, sealed.id)).toBe(plain[sealed.id]?.[0]);
    const result = await resealSecrets(db, rotating);
    expect(result.resealed).toBe(result.accounts);

    const newOnly = createSecretBox({ encryptionKey: KEY_B });
    for (const id of [clear.id, sealed.id]) {
      const row = await storedSecrets(db, id);
      expect(row.webhook_secret).toMatch(/^enc1:/);
      expect(newOnly.open(row.webhook_secret, id)).toBe(plain[id]?.[0]);
      const previous = row.webhook_secret_previous;
      expect(previous === null ? null : newOnly.open(previous, id)).toBe(plain[id]?.[1]);
    }
  });
});

/** An empty database (no migrations applied), of the kind under test. */
async function emptyDatabase(): Promise<Database> {
  const url = process.env.TEST_DATABASE_URL;
  if (url) {
    const name = `sibyl_secrets_${randomBase62(8).toLowerCase()}`;
    const admin = new PostgresDatabase(url, { poolSize: 1 });
    await admin.exec(`CREATE DATABASE "${name}"`);
    await admin.close();
    const db = new PostgresDatabase(withDatabase(url, name), { poolSize: 2 });
    cleanups.push(async () => {
      await db.close();
      const dropper = new PostgresDatabase(url, { poolSize: 1 });
      await dropper.exec(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await dropper.close();
    });
    return db;
  }
  const dir = copyPgliteTemplate('empty');
  const { db } = await PgliteDatabase.open(dir);
  cleanups.push(async () => {
    await db.close();
    rmSync(dirname(dir), { recursive: true, force: true });
  });
  return db;
}

describe('migration 0053', () => {
  it("moves each account's secrets, a rotation's previous one and its overlap included, and drops the columns", async () => {
    const db = await emptyDatabase();
    const all = loadMigrations();
    const version = all.find((m) => m.name === 'webhook_secrets')?.version;
    expect(version).toBe(53);
    await migrate(
      db,
      all.filter((m) => m.version < (version ?? 0)),
    );
    const box = createSecretBox({ encryptionKey: KEY_A });
    const sealed = box.seal('whsec_sealed', 'acct_sealed');
    const previous = box.seal('whsec_before', 'acct_sealed');
    await db.query(
      `INSERT INTO accounts (id, mode, webhook_secret, webhook_secret_previous, webhook_secret_previous_until)
       VALUES ('acct_clear', 'live', 'whsec_clear', NULL, NULL),
              ('acct_sealed', 'sandbox', $1, $2, '2026-12-03T00:00:00Z')`,
      [sealed, previous],
    );
    await migrate(db, all);

    const ctx = createContext(db, new ManualClock(new Date('2026-12-02T00:00:00Z')));
    expect(await webhookSecretOf(ctx, box, 'acct_clear')).toBe('whsec_clear');
    expect(await webhookSecretOf(ctx, box, 'acct_sealed')).toBe('whsec_sealed');
    const row = await storedSecrets(db, 'acct_sealed');
    expect(row).toEqual({
      account_id: 'acct_sealed',
      webhook_secret: sealed,
      webhook_secret_previous: previous,
      webhook_secret_previous_until: new Date('2026-12-03T00:00:00Z'),
    });
    expect(signingSecrets(box, { ...row, secret_owner: 'acct_sealed' }, ctx.clock.now())).toEqual([
      'whsec_sealed',
      'whsec_before',
    ]);
    const columns = await db.query(
      `SELECT column_name FROM information_schema.columns
        WHERE table_name = 'accounts' AND column_name LIKE 'webhook_secret%'`,
    );
    expect(columns).toEqual([]);
  });
});
