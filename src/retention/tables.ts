import * as ai from '../ai/index.js';
import * as dashboard from '../dashboard/index.js';
import type { Statement } from '../db/database.js';
import * as idempotency from '../idempotency/index.js';
import {
  RETENTION_MS as IDEMPOTENCY_RETENTION_MS,
  PARTS_RETENTION_MS,
  PRUNE_PARTS,
} from '../idempotency/index.js';
import * as jobs from '../jobs/index.js';
import * as keys from '../keys/index.js';
import * as markets from '../markets/index.js';
import * as webhooks from '../webhooks/index.js';
import type { RetentionSettings } from './config.js';

/**
 * One table (or one kind of row in it) that retention prunes: rows older than `keepMs` go, at most
 * `limit` per statement.
 */
export interface RetentionTable {
  /** For logs and the run's report. */
  name: string;
  /**
   * A batched delete next to its feature's SQL: `$1` the cutoff (rows that ended before it go),
   * `$2` the most rows one statement deletes; returns one row `{ deleted }`. It must read an index
   * range, not the table, and skip rows locked by live work (SKIP LOCKED).
   */
  prune: Statement;
  /** How long a row is kept after it ended. */
  keepMs: number;
}

/**
 * Everything that is pruned, in order: one entry per table. A new table that grows with use gets a
 * line here (with its `RETENTION_*` setting in config.ts and docs/operations.md#retention).
 * Never the ledger: ledger entries are kept for ever (docs/operations.md#retention, docs/operations.md#the-ledger).
 */
export function retentionTables(settings: RetentionSettings): RetentionTable[] {
  return [
    { name: 'webhook_deliveries', prune: webhooks.PRUNE_DELIVERIES, keepMs: settings.webhookDeliveriesMs },
    {
      name: 'webhook_deliveries (test)',
      prune: webhooks.PRUNE_TEST_DELIVERIES,
      keepMs: settings.testDeliveriesMs,
    },
    { name: 'ai_requests', prune: ai.PRUNE, keepMs: settings.aiRequestsMs },
    { name: 'scheduled_jobs', prune: jobs.PRUNE, keepMs: settings.jobsMs },
    { name: 'market_events', prune: markets.PRUNE_EVENTS, keepMs: settings.marketEventsMs },
    {
      name: 'dashboard_sessions (expired)',
      prune: dashboard.PRUNE_EXPIRED_SESSIONS,
      keepMs: settings.signInsMs,
    },
    { name: 'dashboard_sessions (idle)', prune: dashboard.PRUNE_IDLE_SESSIONS, keepMs: settings.signInsMs },
    { name: 'sign_in_challenges', prune: dashboard.PRUNE_CHALLENGES, keepMs: settings.signInsMs },
    // Fixed by their own contracts rather than settings: stored answers are replayed for 24 hours
    // (docs/api.md#idempotency); the revocation feed is read over seconds.
    { name: 'idempotency_keys', prune: idempotency.PRUNE, keepMs: IDEMPOTENCY_RETENTION_MS },
    { name: 'idempotency_parts', prune: PRUNE_PARTS, keepMs: PARTS_RETENTION_MS },
    { name: 'auth_changes', prune: keys.PRUNE_AUTH_CHANGES, keepMs: keys.AUTH_CHANGES_RETENTION_MS },
  ];
}
