-- The batch price (the busiest keyed route) now takes its key by inserting its finished answer with
-- its charge (src/idempotency/pending-answer.ts): its rows are written once, never updated, so the
-- room 0017 left on every page for an update stays empty. Only the keys of routes that write in
-- their own transaction (AI resolution, schedules, cancels, webhook tests) are claimed, then updated.
ALTER TABLE idempotency_keys RESET (fillfactor);
