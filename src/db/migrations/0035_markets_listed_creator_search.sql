-- The list cache's notification (0016) also for the two columns a list filters on that it left out:
-- a market's creator (`creator`) and its search text (`q`). Neither is changed by this service
-- today, but an operator's SQL, or a later writer, must not leave a cached page or count stale
-- (docs/markets.md#cache, #total).
DROP TRIGGER markets_listed_change ON markets;
CREATE TRIGGER markets_listed_change
  AFTER INSERT OR DELETE
     OR UPDATE OF id, slug, title, description, category, status, resolution_type, sandbox, created_at,
                  closes_at, creator_wallet, search
  ON markets FOR EACH STATEMENT EXECUTE FUNCTION markets_listed_notify();
