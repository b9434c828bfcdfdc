-- The number of markets per (status, category), kept by the database for the market list's `total`
-- (docs/markets.md#kept-list-count): a list filtered by nothing else than the status and the category counts
-- from here instead of counting every listed market (at 100,000 markets that count was 25-30 ms,
-- docs/performance.md#kept-list-count). Append-only: every statement that inserts, updates or
-- deletes markets adds one row per (status, category) it changed, with the difference (statement
-- triggers over the statement's transition tables), so concurrent writers never wait for one
-- another on a shared counter row; a count is the sum of the rows its snapshot sees, exactly the
-- markets that snapshot sees. The markets worker folds the rows into one per (status, category)
-- every minute (src/markets/search/list-counts.ts).
CREATE TABLE market_list_counts (
  id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  status   text NOT NULL,
  category text NOT NULL,
  n        bigint NOT NULL
);

CREATE FUNCTION market_list_counts_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO market_list_counts (status, category, n)
  SELECT status, category, count(*) FROM new_markets GROUP BY status, category;
  RETURN NULL;
END $$;

CREATE FUNCTION market_list_counts_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO market_list_counts (status, category, n)
  SELECT status, category, sum(n)
    FROM (SELECT status, category, -1 AS n FROM old_markets
          UNION ALL
          SELECT status, category, 1 AS n FROM new_markets) AS d
   GROUP BY status, category
  HAVING sum(n) <> 0;
  RETURN NULL;
END $$;

CREATE FUNCTION market_list_counts_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO market_list_counts (status, category, n)
  SELECT status, category, -count(*) FROM old_markets GROUP BY status, category;
  RETURN NULL;
END $$;

CREATE FUNCTION market_list_counts_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM market_list_counts;
  RETURN NULL;
END $$;

CREATE TRIGGER market_list_counts_inserted AFTER INSERT ON markets
  REFERENCING NEW TABLE AS new_markets FOR EACH STATEMENT EXECUTE FUNCTION market_list_counts_inserted();
CREATE TRIGGER market_list_counts_updated AFTER UPDATE ON markets
  REFERENCING OLD TABLE AS old_markets NEW TABLE AS new_markets
  FOR EACH STATEMENT EXECUTE FUNCTION market_list_counts_updated();
CREATE TRIGGER market_list_counts_deleted AFTER DELETE ON markets
  REFERENCING OLD TABLE AS old_markets FOR EACH STATEMENT EXECUTE FUNCTION market_list_counts_deleted();
CREATE TRIGGER market_list_counts_truncated AFTER TRUNCATE ON markets
  FOR EACH STATEMENT EXECUTE FUNCTION market_list_counts_truncated();

INSERT INTO market_list_counts (status, category, n)
SELECT status, category, count(*) FROM markets GROUP BY status, category;
