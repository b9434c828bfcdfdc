-- A one-word search by relevance as the top of an index (docs/markets.md#one-word-search,
-- docs/performance.md#one-word-search): one row per distinct lexeme of each market's search vector,
-- with the rank a search of exactly that lexeme gives the market — ts_rank(search, 'lexeme', 32),
-- computed by PostgreSQL itself, so that it is the same float4 the general statement computes. When
-- the prefix of a one-word search names a single lexeme of the whole table, every match's rank is
-- that lexeme's row, and a page is a walk of market_search_terms_rank from its cursor instead of a
-- rank of every match (src/markets/search/one-word.ts).
-- No foreign key: its check, a statement planned once per connection, was planned while `markets`
-- was small and then scanned it whole for each of a new market's rows (20,000 markets created in
-- 259 s instead of 18 s); the trigger below removes a deleted market's rows instead.
CREATE TABLE market_search_terms (
  market_id text NOT NULL,
  -- Byte order: a prefix is one range of the index whatever the database's collation.
  lexeme    text COLLATE "C" NOT NULL,
  rank      real NOT NULL,
  -- The market's status, so that a search's count of listed markets is read from the index alone.
  status    text NOT NULL,
  PRIMARY KEY (market_id, lexeme)
);
CREATE INDEX market_search_terms_rank ON market_search_terms (lexeme, rank, market_id) INCLUDE (status);

-- The rank of a search of one lexeme. The tsquery is the lexeme quoted as tsquery input reads it
-- (a quote doubled, a backslash escaped), so a lexeme holding punctuation stays one operand.
CREATE FUNCTION market_search_terms_of(id text, search tsvector)
  RETURNS TABLE (market_id text, lexeme text, rank real) LANGUAGE sql STABLE AS $$
  SELECT id, l.lexeme,
         ts_rank(search, ('''' || replace(replace(l.lexeme, '\', '\\'), '''', '''''') || '''')::tsquery, 32)
    FROM unnest(search) AS l
$$;

-- Kept by the database, whoever writes a market (the service, an operator's SQL), in the same
-- transaction: a new market's rows are added, a new search vector replaces them, a new status is
-- copied to them, a deleted market's are removed. The statements by a market's id are planned at each
-- call (EXECUTE): a plan kept from when the table was small would read all of it.
CREATE FUNCTION market_search_terms_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    EXECUTE 'DELETE FROM market_search_terms WHERE market_id = $1' USING OLD.id;
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' THEN
    IF OLD.search IS NOT DISTINCT FROM NEW.search THEN
      EXECUTE 'UPDATE market_search_terms SET status = $2 WHERE market_id = $1' USING NEW.id, NEW.status;
      RETURN NULL;
    END IF;
    EXECUTE 'DELETE FROM market_search_terms WHERE market_id = $1' USING OLD.id;
  END IF;
  IF NEW.search IS NOT NULL THEN
    INSERT INTO market_search_terms (market_id, lexeme, rank, status)
    SELECT t.market_id, t.lexeme, t.rank, NEW.status FROM market_search_terms_of(NEW.id, NEW.search) t;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER market_search_terms_insert AFTER INSERT ON markets
  FOR EACH ROW EXECUTE FUNCTION market_search_terms_keep();
CREATE TRIGGER market_search_terms_update AFTER UPDATE OF search, status ON markets
  FOR EACH ROW WHEN (OLD.search IS DISTINCT FROM NEW.search OR OLD.status IS DISTINCT FROM NEW.status)
  EXECUTE FUNCTION market_search_terms_keep();
CREATE TRIGGER market_search_terms_delete AFTER DELETE ON markets
  FOR EACH ROW EXECUTE FUNCTION market_search_terms_keep();

INSERT INTO market_search_terms (market_id, lexeme, rank, status)
SELECT t.market_id, t.lexeme, t.rank, m.status
  FROM markets m CROSS JOIN LATERAL market_search_terms_of(m.id, m.search) t
 WHERE m.search IS NOT NULL;

-- An exact title (case aside) ranks first: the few markets whose title is the search, found by
-- their title rather than among every match.
CREATE INDEX markets_title_lower ON markets (lower(title)) WHERE status <> 'DRAFT';

-- Statistics for the new table and the title's index, on a database that has markets. Not on an
-- empty one: statistics that say `markets` is empty made the plans a connection keeps for its
-- prepared statements scan it whole (20,000 markets created in 74 s instead of 17 s); with none, the
-- planner assumes a table of some size until it is first analyzed.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM markets) THEN
    ANALYZE market_search_terms;
    ANALYZE markets;
  END IF;
END
$$;
