-- The market stream's events (docs/streams.md#markets): what `GET /stream/markets` sends after its
-- snapshot, kept 24 hours so that a client reconnecting with `Last-Event-ID` gets what it missed.
-- Written by the transaction that changes the market (ingestion, the lifecycle, an administrator's
-- resolution), which then notifies `market_stream` once: every API process wakes and reads the new
-- rows of the markets its streams follow, one query per wake.
--
-- Ids come from the sequence under a transaction-level advisory lock held until commit, so they
-- ascend in commit order: a reader that has seen id N never later finds a committed row below N.
CREATE SEQUENCE market_stream_ids;

CREATE TABLE market_stream_events (
  id         bigint PRIMARY KEY,
  market_id  text NOT NULL,
  kind       text NOT NULL CHECK (kind IN ('market', 'trade', 'resolved')),
  -- The event's data as sent (one line of JSON), so that each process serialises nothing per stream.
  data       text NOT NULL,
  created_at timestamptz NOT NULL
);

-- A market's events after a point (resume, fan-out), and its last `market` event (what changed).
CREATE INDEX market_stream_events_market ON market_stream_events (market_id, id);
-- Retention: the oldest first.
CREATE INDEX market_stream_events_created ON market_stream_events (created_at);
