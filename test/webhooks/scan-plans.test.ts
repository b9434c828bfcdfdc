import { afterAll, beforeAll, describe, it } from 'vitest';
import { EXPIRING } from '../../src/keys/sql.js';
import { DISABLE_IF_FAILING } from '../../src/webhooks/endpoints-sql.js';
import { ENDPOINT_DELIVERIES, RECOVER } from '../../src/webhooks/sql.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { expectReadByIndex, genericPlanScans } from '../helpers/plans.js';

/**
 * The account events' scans read index ranges, never a whole table: the `key.expiring` look every
 * worker makes each minute (docs/webhooks.md#event-catalog), and an endpoint's health check, its
 * deliveries and their recovery (docs/webhooks.md#endpoint-health). Checked on the plan PostgreSQL
 * keeps for a prepared statement (the generic plan, parameters unknown), over 20,000 keys (one in
 * twenty with an expiry, one in seven revoked) and 20,000 deliveries to 100 endpoints, with
 * statistics.
 */

let database: TestDatabase;
const ROWS = 20_000;

const FILL = `
  INSERT INTO accounts (id, mode) SELECT 'acct_scan' || g, 'live' FROM generate_series(1, 200) g;
  INSERT INTO api_keys (id, account_id, key_hash, key_prefix, name, permissions, expires_at, revoked_at, lineage_id,
                        rate_limit_bucket, created_at)
  SELECT 'key_scan' || g, 'acct_scan' || (1 + g % 200), decode(md5('k' || g), 'hex'), 'sk_' || g, 'k', '{markets}',
         CASE WHEN g % 20 = 0 THEN now() + (g % 730 - 365) * interval '1 day' END,
         CASE WHEN g % 7 = 0 THEN now() END, 'lin_scan' || g, 'bucket_scan' || g, now()
    FROM generate_series(1, ${ROWS}) g;
  INSERT INTO webhook_endpoints (id, account_id, mode, url, event_types, secret, created_at, updated_at)
  SELECT 'we_scan' || g, 'acct_scan' || (1 + g % 200), 'live', 'https://x', '{*}', 's', now(), now()
    FROM generate_series(1, 100) g;
  INSERT INTO webhook_deliveries (id, account_id, url, type, request_id, payload, status, due_at, attempts,
                                  max_attempts, created_at, finished_at, endpoint_id, event_id)
  SELECT 'd' || g, 'acct_scan' || (1 + (g % 100) % 200), 'https://x', 'deposit.credited', 'evt_scan' || g, '{}',
         CASE WHEN g % 3 = 0 THEN 'CALLBACK_FAILED' ELSE 'DELIVERED' END, NULL, 1, 8,
         now() - (g % 60) * interval '1 day', now() - (g % 60) * interval '1 day' + interval '1 minute',
         'we_scan' || (1 + g % 100), 'evt_scan' || g
    FROM generate_series(1, ${ROWS}) g;
  ANALYZE;`;

// Filling is seconds on a quiet machine, far more at a load of 16 on 2 cores: the hook gets room
// for a busy machine (a bound on a hung database, not a timing check).
beforeAll(async () => {
  database = await createTestDatabase();
  await database.db.exec(FILL);
}, 300_000);
afterAll(async () => {
  await database.close();
});

const now = `'${new Date().toISOString()}'`;
const inAWeek = `'${new Date(Date.now() + 7 * 86_400_000).toISOString()}'`;

describe('the account events’ scans', () => {
  it('key.expiring reads the keys of the next 7 days by an index (api_keys_expiring), not every key', async () => {
    const found = await genericPlanScans(
      database.db,
      EXPIRING.text,
      ['timestamptz', 'timestamptz'],
      [now, inAWeek],
    );
    expectReadByIndex(found, 'api_keys');
  });

  it("an endpoint's health check reads its recent deliveries by an index", async () => {
    const found = await genericPlanScans(
      database.db,
      DISABLE_IF_FAILING.text,
      ['text', 'timestamptz', 'integer', 'bigint'],
      [`'we_scan7'`, now, '20', '432000000'],
    );
    // The endpoint itself is read by its key, or, while the table is this small, whole.
    expectReadByIndex(found, 'webhook_deliveries');
  });

  it("an endpoint's deliveries, filtered or not, and their recovery read its range of deliveries", async () => {
    const listed = await genericPlanScans(
      database.db,
      ENDPOINT_DELIVERIES.text,
      ['text', 'text', 'text', 'timestamptz', 'timestamptz', 'text', 'integer'],
      [`'we_scan7'`, `'CALLBACK_FAILED'`, 'NULL', 'NULL', 'NULL', 'NULL', '21'],
    );
    expectReadByIndex(listed, 'webhook_deliveries');
    const recovered = await genericPlanScans(
      database.db,
      RECOVER.text,
      ['text', 'timestamptz', 'timestamptz'],
      [`'we_scan7'`, `'${new Date(Date.now() - 86_400_000).toISOString()}'`, now],
    );
    expectReadByIndex(recovered, 'webhook_deliveries');
  });
});
