-- Each outcome's last trade (docs/markets.md#outcomes-and-probability): the trade with the greatest
-- (at, trade id), whatever order trades arrive in, kept by the statement that records trades
-- (src/markets/ingest/ingest-sql.ts INSERT_TRADES) in the same transaction. The list's statistics,
-- the detail and the market stream's writer read an outcome's last price here, one row by its key,
-- where each read the newest entry of market_trades_last for every outcome it showed
-- (docs/performance.md#kept-last-price).
CREATE TABLE market_outcome_last (
  market_id     text NOT NULL,
  outcome_index integer NOT NULL,
  price         integer NOT NULL,
  at            timestamptz NOT NULL,
  trade_id      text NOT NULL,
  PRIMARY KEY (market_id, outcome_index)
) WITH (fillfactor = 80);
-- Pages filled to 80% keep room for each chunk's new version on the same page: a HOT update (the key
-- never changes), as for market_candles (migration 0034).

-- The outcomes that have trades, each its newest by the index market_trades_last.
INSERT INTO market_outcome_last (market_id, outcome_index, price, at, trade_id)
SELECT o.market_id, o.outcome_index, t.price, t.at, t.trade_id
  FROM market_outcomes o
  CROSS JOIN LATERAL (
    SELECT x.price, x.at, x.trade_id FROM market_trades x
     WHERE x.market_id = o.market_id AND x.outcome_index = o.outcome_index
     ORDER BY x.at DESC, x.trade_id DESC LIMIT 1
  ) t
 ORDER BY o.market_id, o.outcome_index;
