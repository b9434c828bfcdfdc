-- Idempotency keys: a client whose answer was lost retries with the same Idempotency-Key and gets
-- the stored answer instead of a second charge (docs/api.md#idempotency).

CREATE TABLE idempotency_keys (
  account_id      text NOT NULL,
  idempotency_key text NOT NULL,
  -- sha256 of method, path and the canonical JSON body: the same key with another request is refused.
  fingerprint     text NOT NULL,
  -- The request that holds (or held) the key; its id is the one a replay answers with.
  request_id      text NOT NULL,
  status          text NOT NULL CHECK (status IN ('running', 'done')),
  -- While running: until when the holder may finish; past it (the process died) a retry takes over.
  locked_until    timestamptz,
  response_status integer,
  -- The answer exactly as sent, stored in the same transaction as the request's charge.
  response_body   text,
  created_at      timestamptz NOT NULL,
  PRIMARY KEY (account_id, idempotency_key),
  CHECK (status = 'running' OR (response_status IS NOT NULL AND response_body IS NOT NULL))
);

-- Keys are kept 24 hours, then pruned by the worker.
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- Where the server has it, lz4 compresses answers for less CPU than the default pglz (measured in
-- docs/performance.md); the embedded database keeps the default.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
    EXECUTE 'ALTER TABLE idempotency_keys ALTER COLUMN response_body SET COMPRESSION lz4';
  END IF;
END
$$;
