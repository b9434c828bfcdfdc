-- One row of market_stream_events may hold several `trade` events of one market
-- (docs/streams.md#markets, docs/performance.md#one-row-per-market-of-a-transaction): the ones one
-- transaction wrote, `events` of them, whose ids are id - events + 1 … id (taken together from the
-- sequence) and whose data are the lines of `data`, in that order. A row per trade cost an index
-- entry in each of the table's three indexes and a heap tuple for every trade an ingestion chunk
-- recorded; a row per market of the chunk costs them once. `id` stays the key and is the row's last
-- event id, so "the events after n" are still the rows whose id is above n, the first of which may
-- begin at or before n. The rows written before this migration are one event each.
ALTER TABLE market_stream_events
  ADD COLUMN events integer NOT NULL DEFAULT 1,
  ADD CONSTRAINT market_stream_events_batch CHECK (events = 1 OR (events > 1 AND kind = 'trade'));

-- A market's trades of one chunk make a data text of kilobytes, which PostgreSQL would compress
-- (pglz) before moving it out of line: half of the INSERT's time for 4,250 trades
-- (docs/performance.md#one-row-per-market-of-a-transaction). Stored out of line as it is, as the
-- one-event rows, which never reached the compression threshold, always were in effect.
ALTER TABLE market_stream_events ALTER COLUMN data SET STORAGE EXTERNAL;
