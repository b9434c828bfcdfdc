-- AI resolution requests (docs/ai.md): the row is the state machine PENDING → PROCESSING →
-- COMPLETED | FAILED, claimed by workers with FOR UPDATE SKIP LOCKED and a lease.

CREATE TABLE ai_requests (
  -- The id of the HTTP request that submitted it (also its charge's request_id).
  id                   text PRIMARY KEY,
  account_id           text NOT NULL REFERENCES accounts (id),
  key_id               text,
  -- Which models answer: the configured providers (live) or the four sandbox models.
  mode                 text NOT NULL CHECK (mode IN ('live', 'sandbox')),
  status               text NOT NULL DEFAULT 'PENDING'
                       CHECK (status IN ('PENDING', 'PROCESSING', 'COMPLETED', 'FAILED')),
  question             text NOT NULL,
  outcomes             text[] NOT NULL,
  context              text NOT NULL DEFAULT '',
  confidence_threshold double precision NOT NULL CHECK (confidence_threshold BETWEEN 0 AND 1),
  callback_url         text,
  market_id            text,
  -- The charge that paid for it (refunded once if it FAILED), and what the answer reported.
  charge_entry_id      bigint NOT NULL REFERENCES ledger_entries (id),
  cost_micros          bigint NOT NULL,
  balance_after_micros bigint NOT NULL,
  -- Set when it finishes: the result object (COMPLETED) or the error (FAILED).
  result               jsonb,
  error_code           text,
  error_message        text,
  refund_entry_id      bigint REFERENCES ledger_entries (id),
  callback_delivery_id text,
  -- The lease of the worker resolving it; whoever finishes it must still hold lease_token.
  attempts             integer NOT NULL DEFAULT 0,
  lease_until          timestamptz,
  lease_token          text,
  created_at           timestamptz NOT NULL,
  started_at           timestamptz,
  completed_at         timestamptz,
  CHECK ((status IN ('COMPLETED', 'FAILED')) = (completed_at IS NOT NULL)),
  CHECK (status <> 'COMPLETED' OR result IS NOT NULL),
  CHECK (status <> 'FAILED' OR error_code IS NOT NULL)
);

-- What the claim statement scans: only unfinished rows, oldest first.
CREATE INDEX ai_requests_unfinished ON ai_requests (created_at) WHERE status IN ('PENDING', 'PROCESSING');
CREATE INDEX ai_requests_account ON ai_requests (account_id, created_at);

-- Each model's answer, stored as it arrives, so a resolution resumed after its worker died asks
-- only the models that had not answered yet. One row per model position.
CREATE TABLE ai_votes (
  request_id    text NOT NULL REFERENCES ai_requests (id),
  position      smallint NOT NULL CHECK (position BETWEEN 0 AND 3),
  model         text NOT NULL,
  outcome_index integer,
  confidence    double precision,
  reasoning     text,
  latency_ms    integer NOT NULL,
  -- Why this model gave no valid answer; NULL when it did (a vote, or "cannot determine").
  error_kind    text,
  error_message text,
  input_tokens  integer,
  output_tokens integer,
  answered_at   timestamptz NOT NULL,
  PRIMARY KEY (request_id, position),
  CHECK (error_kind IS NOT NULL OR confidence IS NOT NULL)
);
