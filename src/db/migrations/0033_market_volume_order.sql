-- sort=volume as an index walk (docs/markets.md#search-and-sort, docs/performance.md#market-data-at-scale).
-- The order is ⌊notional ÷ 10,000⌋ (the volume in lamports), then the market id, both in the
-- request's direction. Every market now has its totals row from creation on (trades 0, notional 0:
-- src/markets/ingest/ingest-sql.ts INSERT_MARKET), so the list reads the order straight from this
-- index, starting at a cursor, instead of computing the key of a LEFT JOIN for every market and
-- sorting them all. The key is an expression of the row the trade statement already updates
-- (INSERT_TRADES), so no writer has anything more to keep.
INSERT INTO market_trade_totals (market_id, trades, notional)
SELECT id, 0, 0 FROM markets ORDER BY id
    ON CONFLICT (market_id) DO NOTHING;

-- Replaces the index on the raw notional, which no read used: ties of the key break by id, which an
-- order by notional does not give.
DROP INDEX market_trade_totals_notional;
CREATE INDEX market_trade_totals_volume ON market_trade_totals ((floor(notional / 10000)), market_id);

-- The planner's statistics of the new expression (the order of a page is read from them).
ANALYZE market_trade_totals;
