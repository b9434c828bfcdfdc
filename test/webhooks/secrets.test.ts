import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { createContext } from '../../src/context.js';
import { systemClock } from '../../src/lib/clock.js';
import { resealSecrets } from '../../src/webhooks/reseal.js';
import { clearSecretBox, createSecretBox } from '../../src/webhooks/secret-box.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const KEY_A = Buffer.alloc(32, 1).toString('base64');
const KEY_B = Buffer.alloc(32, 2).toString('base64');

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
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

  it('rotating the key: the previous key still reads, and reseal-secrets moves every account to the new one', async () => {
    const db = database.db;
    const oldBox = createSecretBox({ encryptionKey: KEY_A });
    const clear = await createAccount(createContext(db, systemClock), { mode: 'live' }, clearSecretBox);
    const sealed = await createAccount(createContext(db, systemClock), { mode: 'live' }, oldBox);
    const plain = {
      [clear.id]: clearSecretBox.open(clear.storedWebhookSecret, clear.id),
      [sealed.id]: oldBox.open(sealed.storedWebhookSecret, sealed.id),
    };

    const rotating = createSecretBox({ encryptionKey: KEY_B, previousEncryptionKey: KEY_A });
    expect(rotating.open(sealed.storedWebhookSecret, sealed.id)).toBe(plain[sealed.id]);
    const result = await resealSecrets(db, rotating);
    expect(result.resealed).toBe(result.accounts);

    const newOnly = createSecretBox({ encryptionKey: KEY_B });
    const rows = await db.query<{ id: string; webhook_secret: string }>(
      'SELECT id, webhook_secret FROM accounts WHERE id = ANY($1::text[])',
      [[clear.id, sealed.id]],
    );
    for (const row of rows) {
      expect(row.webhook_secret).toMatch(/^enc1:/);
      expect(newOnly.open(row.webhook_secret, row.id)).toBe(plain[row.id]);
    }
  });
});
