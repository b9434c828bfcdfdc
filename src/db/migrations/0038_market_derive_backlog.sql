-- What each ingestion chunk's trades and changed markets still owe the derived tables
-- (docs/markets.md#derived-after-commit): the minute, hour and day candles and the market stream's
-- events, written in a second transaction right after the chunk's own commits, so that the next
-- chunk's facts are written meanwhile (src/markets/ingest/derive.ts). The row is inserted by the
-- chunk's transaction and deleted by the one that does its work: a chunk whose process died between
-- the two is left here, and the markets worker does it (claimed with a lease, FOR UPDATE SKIP LOCKED).
-- `changes` is the chunk's JSON (its applied trades, markets and orders), read back only then.
CREATE TABLE market_derive_backlog (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  changes     text NOT NULL,
  enqueued_at timestamptz NOT NULL DEFAULT now(),
  lease_token text,
  lease_until timestamptz,
  attempts    integer NOT NULL DEFAULT 0
);
-- Stored as written, without compression: the row lives a few milliseconds, and compressing ~100 kB
-- of JSON would cost more than keeping it.
ALTER TABLE market_derive_backlog ALTER COLUMN changes SET STORAGE EXTERNAL;
