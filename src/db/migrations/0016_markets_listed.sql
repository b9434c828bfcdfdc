-- The market list is cached per API instance (src/markets/list-cache.ts) until something it shows
-- changes: every statement that writes a listed column of markets, or any outcome label, notifies
-- `markets_listed` when its transaction commits, whoever runs it (ingestion, the lifecycle worker,
-- the administrator's CLI, another process). Trades, orders, positions, stakes, lifecycle leases
-- and resolution details do not change the list and do not notify.

CREATE FUNCTION markets_listed_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('markets_listed', '');
  RETURN NULL;
END
$$;

CREATE TRIGGER markets_listed_change
  AFTER INSERT OR DELETE
     OR UPDATE OF id, slug, title, description, category, status, resolution_type, sandbox, created_at, closes_at
  ON markets FOR EACH STATEMENT EXECUTE FUNCTION markets_listed_notify();

CREATE TRIGGER markets_listed_truncate
  AFTER TRUNCATE ON markets FOR EACH STATEMENT EXECUTE FUNCTION markets_listed_notify();

CREATE TRIGGER market_outcomes_listed_change
  AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
  ON market_outcomes FOR EACH STATEMENT EXECUTE FUNCTION markets_listed_notify();
