-- Dropped by migration 0040, the same night, before any release: a chunk's candles (and, at first,
-- its market stream events) were written by a second transaction after the chunk's own, five chunks'
-- at once, with this table holding each chunk's trades until then (and the markets worker writing
-- those of a chunk whose process died in between). Ingestion's chunks of 5,000 events, each writing
-- its own candles, did better (docs/performance.md#chunks-of-5000).
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
