import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { prunedTables } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { genericPlan, planNodes, planScans } from '../helpers/plans.js';

/**
 * Each retention delete reads an index range and deletes by key: no batch scans a whole table.
 * Checked on the plan PostgreSQL keeps for a prepared statement (the generic plan, parameters
 * unknown), over tables of 20,000 rows with statistics.
 */

let database: TestDatabase;
const ROWS = 20_000;

const FILL = `
  INSERT INTO accounts (id, mode) VALUES ('acct_plans', 'sandbox');
  INSERT INTO ledger_entries (account_id, kind, amount_micros, balance_after_micros, reference)
  VALUES ('acct_plans', 'deposit', 1000000, 1000000, 'plans');
  INSERT INTO webhook_deliveries (id, account_id, url, type, request_id, payload, status, due_at, attempts,
                                  max_attempts, created_at, finished_at)
  SELECT 'd' || g, 'acct_plans', 'https://x', CASE WHEN g % 10 = 0 THEN 'test' ELSE 'price' END, 'r' || g, '{}',
         CASE WHEN g % 50 = 0 THEN 'PENDING' ELSE 'DELIVERED' END, now(), 1, 8, now(),
         CASE WHEN g % 50 = 0 THEN NULL ELSE now() - g * interval '1 minute' END
    FROM generate_series(1, ${ROWS}) g;
  INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, status_code, latency_ms)
  SELECT id, 1, created_at, 200, 5 FROM webhook_deliveries;
  INSERT INTO scheduled_jobs (id, account_id, job_type, status, scheduled_for, request, mode, charge_entry_id,
                              cost_micros, request_id, created_at, finished_at)
  SELECT 'j' || g, 'acct_plans', 'PRICE_RESOLUTION', CASE WHEN g % 50 = 0 THEN 'PENDING' ELSE 'COMPLETED' END,
         now(), '{}', 'sandbox', 1, 10000, 'r' || g, now(),
         CASE WHEN g % 50 = 0 THEN NULL ELSE now() - g * interval '1 minute' END
    FROM generate_series(1, ${ROWS}) g;
  INSERT INTO ai_requests (id, account_id, mode, status, question, outcomes, confidence_threshold, charge_entry_id,
                           cost_micros, balance_after_micros, created_at, completed_at, result)
  SELECT 'a' || g, 'acct_plans', 'sandbox', 'COMPLETED', 'q', ARRAY['a', 'b'], 0.75,
         (SELECT min(id) FROM ledger_entries), 250000, 1, now(), now() - g * interval '1 minute', '{}'
    FROM generate_series(1, ${ROWS}) g;
  INSERT INTO ai_votes (request_id, position, model, outcome_index, confidence, latency_ms, answered_at)
  SELECT r.id, p, 'm', 0, 0.9, 1, now() FROM ai_requests r, generate_series(0, 3) p;
  INSERT INTO market_events (id, type, body_sha256, at, ingested_at)
  SELECT 'e' || g, 'stake', '\\x00', now(), now() - g * interval '1 minute' FROM generate_series(1, ${ROWS}) g;
  INSERT INTO market_stream_events (id, market_id, kind, data, created_at)
  SELECT g, 'm' || (g % 100), 'trade', '{}', now() - g * interval '1 minute' FROM generate_series(1, ${ROWS}) g;
  INSERT INTO idempotency_keys (account_id, idempotency_key, fingerprint, request_id, status, response_status,
                                response_body, created_at)
  SELECT 'acct_plans', 'k' || g, 'f', 'r', 'done', 200, '{}', now() - g * interval '1 minute'
    FROM generate_series(1, ${ROWS}) g;
  INSERT INTO idempotency_parts (hash, body, last_used)
  SELECT 'h' || g, 'b', now() - g * interval '1 minute' FROM generate_series(1, ${ROWS}) g;
  INSERT INTO sign_in_challenges (nonce, input, created_at, expires_at)
  SELECT 'n' || g, '{}', now() - g * interval '1 minute', now() - g * interval '1 minute' + interval '5 minutes'
    FROM generate_series(1, ${ROWS}) g;
  INSERT INTO accounts (id, mode) VALUES ('acct_plans_live', 'live');
  INSERT INTO wallet_owners (address, claim) VALUES ('wallet_plans', 'sign-in');
  INSERT INTO dashboard_wallets (address, live_account_id, sandbox_account_id, created_at)
  VALUES ('wallet_plans', 'acct_plans_live', 'acct_plans', now());
  INSERT INTO dashboard_sessions (id, token_hash, wallet_address, created_at, last_seen_at, expires_at)
  SELECT 's' || g, decode(md5('s' || g), 'hex'), 'wallet_plans', now() - g * interval '1 minute',
         now() - g * interval '1 minute', now() - g * interval '1 minute' + interval '7 days'
    FROM generate_series(1, ${ROWS}) g;
  INSERT INTO auth_changes (account_id, created_at)
  SELECT 'acct_plans', now() - g * interval '1 minute' FROM generate_series(1, ${ROWS}) g;
  INSERT INTO account_events (id, account_id, mode, type, data, created_at)
  SELECT 'evt_plans' || g, 'acct_plans', 'live', 'balance.low', '{}', now() - g * interval '1 minute'
    FROM generate_series(1, ${ROWS}) g;
  INSERT INTO webhook_deliveries (id, account_id, url, type, request_id, payload, status, due_at, attempts,
                                  max_attempts, created_at, finished_at, endpoint_id, event_id)
  SELECT 'evt_plans' || g || '_we_plans', 'acct_plans', 'https://x', 'balance.low', 'evt_plans' || g, '{}',
         CASE WHEN g % 50 = 0 THEN 'PENDING' ELSE 'DELIVERED' END, now(), 1, 8, now() - g * interval '1 minute',
         CASE WHEN g % 50 = 0 THEN NULL ELSE now() - g * interval '1 minute' END, 'we_plans', 'evt_plans' || g
    FROM generate_series(1, ${ROWS}) g;
  ANALYZE;`;

// Filling ~300,000 rows is seconds on a quiet machine and took over a minute at a load of 16 on 2
// cores: the hook gets room for a busy machine (a bound on a hung database, not a timing check).
beforeAll(async () => {
  database = await createTestDatabase();
  await database.db.exec(FILL);
}, 300_000);
afterAll(async () => {
  await database.close();
});

const TABLES = await prunedTables(loadConfig({}));

describe('retention deletes', () => {
  for (const table of TABLES) {
    it(`${table.name}: an index range, never a sequential scan`, async () => {
      const plan = await genericPlan(
        database.db,
        table.prune.text,
        ['timestamptz', 'integer'],
        [`'${new Date(Date.now() - 86_400_000).toISOString()}'`, '1000'],
      );
      const found = planScans(plan);
      expect(found.filter((scan) => scan.startsWith('Seq Scan'))).toEqual([]);
      expect(found.some((scan) => /Index Scan|Index Only Scan|Bitmap Index Scan/.test(scan))).toBe(true);
      // Rows are read in the index's order and the batch stops at its size: a Sort (or a hash join
      // feeding one) would read every row past the cutoff, the whole backlog, for each batch.
      expect(planNodes(plan).filter((node) => node === 'Sort')).toEqual([]);
    });
  }
});
