-- The references of a trade, its candles and its traders are checked once per statement instead of
-- once per row (docs/performance.md#trade-references-per-statement), as the ledger's are (0005).
--
-- A foreign key runs a trigger for every inserted row, which looks the parent up and locks it
-- (FOR KEY SHARE: the parent's page is dirtied and its lock logged, once per row even when the
-- same parent was locked by the row before). An ingestion chunk of 4,250 trades ran 4,250 such
-- checks of market_outcomes, one more for each new (market, wallet) of market_traders and one for
-- each new candle: about a fifth of the database's CPU per trade event. One statement-level
-- trigger per table now checks the statement's new rows in one query, their distinct parents once.
--
-- What the keys also guaranteed, that a parent is not deleted while rows refer to it, is kept by
-- the triggers at the end: an outcome with trades or candles, and a market with traders, cannot be
-- deleted, and neither table can be truncated while those rows exist. The service deletes neither.

ALTER TABLE market_trades DROP CONSTRAINT market_trades_market_id_outcome_index_fkey;
ALTER TABLE market_candles DROP CONSTRAINT market_candles_market_id_fkey;
ALTER TABLE market_traders DROP CONSTRAINT market_traders_market_id_fkey;

-- Every new row's (market_id, outcome_index) is an outcome of its market (market_trades,
-- market_candles: the candles' key named only the market before).
CREATE FUNCTION market_rows_check_outcome() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (
    SELECT 1 FROM (SELECT DISTINCT market_id, outcome_index FROM new_rows) n
     WHERE NOT EXISTS (SELECT 1 FROM market_outcomes o
                        WHERE o.market_id = n.market_id AND o.outcome_index = n.outcome_index)
  ) THEN
    RAISE EXCEPTION '% row refers to an outcome that does not exist', TG_TABLE_NAME
      USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER market_trades_references
  AFTER INSERT ON market_trades
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION market_rows_check_outcome();

CREATE TRIGGER market_candles_references
  AFTER INSERT ON market_candles
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION market_rows_check_outcome();

CREATE FUNCTION market_traders_check_market() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (
    SELECT 1 FROM (SELECT DISTINCT market_id FROM new_rows) n
     WHERE NOT EXISTS (SELECT 1 FROM markets m WHERE m.id = n.market_id)
  ) THEN
    RAISE EXCEPTION 'market_traders row refers to a market that does not exist'
      USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER market_traders_references
  AFTER INSERT ON market_traders
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION market_traders_check_market();

-- The parents stay while rows refer to them.
CREATE FUNCTION market_outcomes_keep_referenced() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    IF EXISTS (SELECT 1 FROM market_trades) OR EXISTS (SELECT 1 FROM market_candles) THEN
      RAISE EXCEPTION 'market_outcomes cannot be truncated while trades or candles refer to them'
        USING ERRCODE = 'foreign_key_violation';
    END IF;
  ELSIF EXISTS (SELECT 1 FROM market_trades t
                 WHERE t.market_id = OLD.market_id AND t.outcome_index = OLD.outcome_index)
     OR EXISTS (SELECT 1 FROM market_candles c
                 WHERE c.market_id = OLD.market_id AND c.outcome_index = OLD.outcome_index) THEN
    RAISE EXCEPTION 'outcome % of market % has trades or candles: it cannot be deleted',
      OLD.outcome_index, OLD.market_id USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN OLD;
END
$$;

CREATE TRIGGER market_outcomes_referenced
  BEFORE DELETE ON market_outcomes
  FOR EACH ROW EXECUTE FUNCTION market_outcomes_keep_referenced();

CREATE TRIGGER market_outcomes_referenced_truncate
  BEFORE TRUNCATE ON market_outcomes
  FOR EACH STATEMENT EXECUTE FUNCTION market_outcomes_keep_referenced();

CREATE FUNCTION markets_keep_traded() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    IF EXISTS (SELECT 1 FROM market_traders) THEN
      RAISE EXCEPTION 'markets cannot be truncated while market_traders refers to them'
        USING ERRCODE = 'foreign_key_violation';
    END IF;
  ELSIF EXISTS (SELECT 1 FROM market_traders t WHERE t.market_id = OLD.id) THEN
    RAISE EXCEPTION 'market % has traders: it cannot be deleted', OLD.id
      USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN OLD;
END
$$;

CREATE TRIGGER markets_traded
  BEFORE DELETE ON markets
  FOR EACH ROW EXECUTE FUNCTION markets_keep_traded();

CREATE TRIGGER markets_traded_truncate
  BEFORE TRUNCATE ON markets
  FOR EACH STATEMENT EXECUTE FUNCTION markets_keep_traded();
