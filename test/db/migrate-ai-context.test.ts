import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { loadMigrations, migrate } from '../../src/db/migrate.js';
import { PgliteDatabase } from '../../src/db/pglite.js';
import { copyPgliteTemplate } from '../helpers/db.js';

/**
 * 0046 keeps what stored resolutions mean (docs/attestations.md#ai-resolutions): before it, a context
 * left out and a context of "" were both stored as '' and signed as null; after it, those rows say
 * NULL, so the record's context is what their attestations hashed. A context with text is untouched.
 */

const dir = copyPgliteTemplate('empty');
afterAll(() => rmSync(dirname(dir), { recursive: true, force: true }));

it('0046: stored empty contexts become NULL, what their attestations signed; others stay', async () => {
  const { db } = await PgliteDatabase.open(dir);
  try {
    const all = loadMigrations();
    const version = all.find((m) => m.name === 'ai_context_as_sent')?.version;
    expect(version).toBeDefined();
    await migrate(
      db,
      all.filter((m) => m.version < (version ?? 0)),
    );
    await db.exec(`
      INSERT INTO accounts (id, mode, webhook_secret) VALUES ('acct_ctx', 'sandbox', 'x');
      INSERT INTO ledger_entries (account_id, kind, amount_micros, balance_after_micros, reference)
      VALUES ('acct_ctx', 'deposit', 1000000, 1000000, 'ctx');
      INSERT INTO ai_requests (id, account_id, mode, question, outcomes, confidence_threshold, charge_entry_id,
                               cost_micros, balance_after_micros, created_at)
      VALUES ('req_none', 'acct_ctx', 'sandbox', 'Q?', '{Yes,No}', 0.7, 1, 250000, 750000, now());
      INSERT INTO ai_requests (id, account_id, mode, question, outcomes, context, confidence_threshold,
                               charge_entry_id, cost_micros, balance_after_micros, created_at)
      VALUES ('req_text', 'acct_ctx', 'sandbox', 'Q?', '{Yes,No}', 'Some context', 0.7, 1, 250000, 750000, now());`);
    await migrate(db, all);
    const rows = await db.query<{ id: string; context: string | null }>(
      'SELECT id, context FROM ai_requests ORDER BY id',
    );
    expect(rows).toEqual([
      { id: 'req_none', context: null },
      { id: 'req_text', context: 'Some context' },
    ]);
  } finally {
    await db.close();
  }
});
