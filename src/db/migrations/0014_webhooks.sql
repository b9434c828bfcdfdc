-- Webhook deliveries: the outbox. A row is written in the transaction of the result it reports, so
-- a result is never committed without its callback (nor a callback without its result).
CREATE TABLE webhook_deliveries (
  -- The Standard Webhooks `webhook-id`: the same on every attempt and redelivery.
  id              text PRIMARY KEY,
  account_id      text NOT NULL REFERENCES accounts (id),
  url             text NOT NULL,
  type            text NOT NULL CHECK (type IN ('ai', 'price', 'test')),
  -- The request whose result this reports (the AI request or the job's request id).
  request_id      text NOT NULL,
  -- The JSON body without its `signature` field; signed at each attempt with the current secret(s).
  payload         text NOT NULL,
  -- PENDING (an attempt is due at due_at), SENDING (leased until due_at), DELIVERED, STOPPED (410),
  -- CALLBACK_FAILED (the last attempt failed).
  status          text NOT NULL CHECK (status IN ('PENDING', 'SENDING', 'DELIVERED', 'STOPPED', 'CALLBACK_FAILED')),
  due_at          timestamptz,
  lease_token     text,
  attempts        integer NOT NULL DEFAULT 0,
  max_attempts    integer NOT NULL,
  last_status_code integer,
  last_error      text,
  created_at      timestamptz NOT NULL,
  finished_at     timestamptz
);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (due_at) WHERE status IN ('PENDING', 'SENDING');
CREATE INDEX webhook_deliveries_account ON webhook_deliveries (account_id, created_at DESC, id DESC);

-- Every attempt: when, what came back (a status code or an error), how long it took.
CREATE TABLE webhook_attempts (
  delivery_id  text NOT NULL REFERENCES webhook_deliveries (id),
  attempt      integer NOT NULL,
  attempted_at timestamptz NOT NULL,
  status_code  integer,
  error        text,
  latency_ms   integer NOT NULL,
  PRIMARY KEY (delivery_id, attempt)
);

-- Secret rotation: the previous secret keeps signing (beside the new one) until webhook_secret_previous_until.
ALTER TABLE accounts ADD COLUMN webhook_secret_previous text;
ALTER TABLE accounts ADD COLUMN webhook_secret_previous_until timestamptz;
