-- Scheduled price checks and AI resolutions (docs/jobs.md). The row is the state machine:
-- PENDING → PROCESSING → COMPLETED | FAILED, and PENDING → CANCELLED. Workers claim due rows with
-- FOR UPDATE SKIP LOCKED and a lease; the charge, the refund of a cancelled or failed job, the
-- result and its callback row each commit in one transaction with the status they belong to.

CREATE TABLE scheduled_jobs (
  id               text PRIMARY KEY,
  account_id       text NOT NULL,
  job_type         text NOT NULL CHECK (job_type IN ('PRICE_RESOLUTION', 'AI_RESOLUTION')),
  status           text NOT NULL CHECK (status IN ('PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'CANCELLED')),
  scheduled_for    timestamptz NOT NULL,
  -- What was asked: the symbol, or the question, outcomes, context and threshold.
  request          jsonb NOT NULL,
  callback_url     text,
  -- The account's mode when scheduled: sandbox jobs price from the sandbox feed and its models.
  mode             text NOT NULL CHECK (mode IN ('live', 'sandbox')),
  -- The job's charge; a cancel or a failure refunds exactly this entry, at most once.
  charge_entry_id  bigint NOT NULL,
  cost_micros      bigint NOT NULL,
  request_id       text NOT NULL,
  key_id           text,
  result           jsonb,
  error            jsonb,
  delivery_id      text,
  attempts         integer NOT NULL DEFAULT 0,
  lease_until      timestamptz,
  lease_token      text,
  created_at       timestamptz NOT NULL,
  started_at       timestamptz,
  finished_at      timestamptz,
  CHECK (status <> 'PROCESSING' OR (lease_until IS NOT NULL AND lease_token IS NOT NULL))
);

-- Due work, and the earliest due time the worker sleeps until.
CREATE INDEX scheduled_jobs_pending ON scheduled_jobs (scheduled_for) WHERE status = 'PENDING';
CREATE INDEX scheduled_jobs_leased ON scheduled_jobs (lease_until) WHERE status = 'PROCESSING';
-- Listing: an account's jobs of one type, newest first.
CREATE INDEX scheduled_jobs_account ON scheduled_jobs (account_id, job_type, created_at DESC, id DESC);
