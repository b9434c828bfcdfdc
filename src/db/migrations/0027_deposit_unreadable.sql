-- Transactions the deposit watcher cannot book (docs/deposits.md#unreadable-transactions), and token
-- amounts of any size.
--
-- An SPL token amount is a u64: up to 18446744073709551615 base units, beyond `bigint`. One such
-- transfer to the treasury made every later poll fail at the cast, so every later deposit waited.
-- numeric(20,0) holds every u64 exactly (the drivers return it as text; readers use BigInt()).
-- This rewrites `deposits` once, under its lock: the table has a row per deposit, small.
ALTER TABLE deposits ALTER COLUMN amount TYPE numeric(20,0);

-- A finalized transaction the watcher read but could not book: the parser refused its shape, a
-- deposit in it is worth more than the ledger holds, or the database refused its row for the data it
-- carries. Recorded once (the signature is the key), listed by `sibyl deposits list --unreadable`,
-- and the cursor moves past it: nothing else waits. A rescan that books it deletes its row.
CREATE TABLE deposit_unreadable (
  signature  text PRIMARY KEY,
  slot       bigint NOT NULL,
  block_time timestamptz,
  reason     text NOT NULL,
  seen_at    timestamptz NOT NULL
);

CREATE INDEX deposit_unreadable_slot ON deposit_unreadable (slot DESC);
