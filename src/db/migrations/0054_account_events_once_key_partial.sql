-- Only the events made at most once (a key's expiry warning) have a once_key; every other event (a
-- finished job's, a deposit's) left a NULL entry in the unique index all the same: one index insert
-- an event for nothing, and most of them are `job.completed`, one a finished job
-- (docs/jobs.md#claims). The index now holds the keys only; RECORD_EVENTS names its predicate.
CREATE UNIQUE INDEX account_events_once_key ON account_events (once_key) WHERE once_key IS NOT NULL;
ALTER TABLE account_events DROP CONSTRAINT account_events_once_key_key;
