-- Retention keeps an account event while any of its deliveries is unfinished
-- (docs/operations.md#retention): its delete asks, for each old event, oldest first, whether a
-- delivery of it is pending or sending. Without an index on the event, PostgreSQL answered that
-- with a hash anti-join over every event older than the cutoff, sorted, for each batch of 1,000:
-- 370 ms a batch over a backlog of 260,000 old events (generic plan, PostgreSQL 15), and more as
-- the backlog grows. With this index each event is one probe and a batch reads only its own rows
-- (9 ms). Only unfinished deliveries of account events are in it (not callbacks, not finished
-- ones): an entry is added when such a delivery is written or updated while pending or sending
-- (made, claimed, put back for a retry); its event id never changes, and `status` is already in
-- the predicates of the outbox's other partial indexes, so no update that was HOT stops being one.
CREATE INDEX webhook_deliveries_unfinished_event ON webhook_deliveries (event_id)
  WHERE status IN ('PENDING', 'SENDING') AND event_id IS NOT NULL;
