-- Retention (DESIGN §14, docs/operations.md#retention): a periodic task deletes finished work after
-- its period, in small batches, one worker at a time.

-- One row per task that must run in one worker process at a time across the deployment: whoever
-- holds the row's lease (`holder`, until `lease_until`) runs it; a holder that died lets it lapse.
-- A row rather than an advisory lock: the task's batches run on whatever pooled connection is free,
-- each in its own transaction, which a session lock (tied to one connection) or a transaction lock
-- (one long transaction) would not allow; a row works the same on PGlite and PostgreSQL, and is
-- read with the service's clock.
CREATE TABLE task_leases (
  name        text PRIMARY KEY,
  holder      text NOT NULL,
  lease_until timestamptz NOT NULL
);

-- What each batched delete scans: only the finished rows, oldest first, so a batch reads the
-- index range it deletes instead of the whole table. The predicates are those of the deletes
-- (src/*/sql.ts, PRUNE_*), which is what lets the planner use them.
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (finished_at)
  WHERE status IN ('DELIVERED', 'STOPPED', 'CALLBACK_FAILED') AND type <> 'test';
CREATE INDEX webhook_deliveries_test_finished ON webhook_deliveries (finished_at)
  WHERE status IN ('DELIVERED', 'STOPPED', 'CALLBACK_FAILED') AND type = 'test';
CREATE INDEX ai_requests_finished ON ai_requests (completed_at) WHERE status IN ('COMPLETED', 'FAILED');
CREATE INDEX scheduled_jobs_finished ON scheduled_jobs (finished_at)
  WHERE status IN ('COMPLETED', 'FAILED', 'CANCELLED');
CREATE INDEX market_events_ingested ON market_events (ingested_at);
