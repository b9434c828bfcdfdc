-- Trade ingestion keeps each outcome's 1 m, 1 h and 1 d candles (src/markets/ingest/ingest-sql.ts
-- INSERT_TRADES): every chunk of trades updates the current hour's and day's candle of each outcome
-- it trades, again and again. With full pages each of those updates wrote a new row version on
-- another page and a new entry in the primary key, and each upsert's lookup then walked the key's
-- dead versions (docs/performance.md#trade-ingestion-before-and-after-the-candle-upkeep). Pages
-- filled to 80% keep room for a new version on the same page: a HOT update (the key never changes),
-- no index entry, and the dead versions are pruned by the next read of the page, autovacuum or not.
-- Applies to the pages written from now on; old buckets are rarely updated.
ALTER TABLE market_candles SET (fillfactor = 80);
