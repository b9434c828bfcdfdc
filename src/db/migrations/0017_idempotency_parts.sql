-- Stored answers share their bulk (src/idempotency/answer-parts.ts): an answer is its head
-- (response_body), an optional shared part (response_part, the SHA-256 of its text) and a tail
-- (response_tail). A replay sends response_body || part || response_tail, the bytes first sent.

CREATE TABLE idempotency_parts (
  hash      text PRIMARY KEY,
  body      text NOT NULL,
  -- Moved by every store of the part at least once an hour; parts unused for 26 hours are pruned,
  -- after every answer that refers to them (answers are kept 24 hours).
  last_used timestamptz NOT NULL
);

CREATE INDEX idempotency_parts_last_used ON idempotency_parts (last_used);

ALTER TABLE idempotency_keys
  ADD COLUMN response_part text,
  ADD COLUMN response_tail text,
  ADD CHECK ((response_part IS NULL) = (response_tail IS NULL));

-- A key is inserted running and updated once when its answer is stored, milliseconds later: room
-- left on each page lets that update stay on the page (a HOT update, with no new index entries).
ALTER TABLE idempotency_keys SET (fillfactor = 50);

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
    EXECUTE 'ALTER TABLE idempotency_parts ALTER COLUMN body SET COMPRESSION lz4';
  END IF;
END
$$;
