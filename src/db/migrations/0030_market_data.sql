-- Market data for builders (docs/markets.md#search-and-sort, #history, #trades): full-text search
-- over the list, an index for the closing-time order, and the candles behind price history.

-- The text a search reads: title (weight A), outcome labels (B), category (C), description (D), in
-- the language-neutral `simple` configuration. One definition, used by the backfill below and by the
-- statement that creates a market (src/markets/ingest-sql.ts); outcome labels are fixed at creation.
CREATE FUNCTION market_search_vector(title text, description text, category text, labels text[])
  RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT setweight(to_tsvector('simple', title), 'A')
      || setweight(to_tsvector('simple', array_to_string(labels, ' ')), 'B')
      || setweight(to_tsvector('simple', category), 'C')
      || setweight(to_tsvector('simple', description), 'D')
$$;

ALTER TABLE markets ADD COLUMN search tsvector;
UPDATE markets m
   SET search = market_search_vector(m.title, m.description, m.category,
         ARRAY(SELECT label FROM market_outcomes o WHERE o.market_id = m.id ORDER BY o.outcome_index));
CREATE INDEX markets_search ON markets USING gin (search) WHERE status <> 'DRAFT';

-- sort=closesAt (soonest first) and its keyset pages.
CREATE INDEX markets_list_closes ON markets (closes_at, id) WHERE status <> 'DRAFT';
-- sort=volume: the all-time totals in order.
CREATE INDEX market_trade_totals_notional ON market_trade_totals (notional, market_id);

-- Price history: one candle per (market, outcome, width, bucket) with width 60 s, 1 h and 1 d, kept
-- by the statement that records trades (src/markets/ingest-sql.ts INSERT_TRADES), in the same
-- transaction, whatever order trades arrive in: `open` belongs to the earliest trade of the bucket
-- by (at, trade id) and `close` to the latest, so each candle stores which trades those are. A
-- history read takes the widest width that divides its interval: a year at 1d is 365 rows, a day at
-- 1m 1,440. Never pruned.
CREATE TABLE market_candles (
  market_id     text NOT NULL REFERENCES markets (id),
  outcome_index integer NOT NULL,
  width         integer NOT NULL CHECK (width IN (60, 3600, 86400)),
  bucket        timestamptz NOT NULL,
  open          integer NOT NULL,
  high          integer NOT NULL,
  low           integer NOT NULL,
  close         integer NOT NULL,
  volume        numeric NOT NULL CHECK (volume > 0),
  trades        bigint NOT NULL CHECK (trades > 0),
  open_at       timestamptz NOT NULL,
  open_trade    text NOT NULL,
  close_at      timestamptz NOT NULL,
  close_trade   text NOT NULL,
  PRIMARY KEY (market_id, outcome_index, width, bucket)
);

INSERT INTO market_candles (market_id, outcome_index, width, bucket, open, high, low, close, volume, trades,
                            open_at, open_trade, close_at, close_trade)
SELECT t.market_id, t.outcome_index, w.width,
       date_bin(make_interval(secs => w.width), t.at, timestamptz '1970-01-01 00:00:00+00') AS bucket,
       (array_agg(t.price ORDER BY t.at, t.trade_id))[1],
       max(t.price), min(t.price),
       (array_agg(t.price ORDER BY t.at DESC, t.trade_id DESC))[1],
       sum(t.shares), count(*),
       min(t.at), (array_agg(t.trade_id ORDER BY t.at, t.trade_id))[1],
       max(t.at), (array_agg(t.trade_id ORDER BY t.at DESC, t.trade_id DESC))[1]
  FROM market_trades t
 CROSS JOIN (VALUES (60), (3600), (86400)) AS w (width)
 GROUP BY t.market_id, t.outcome_index, w.width, bucket;

-- The 24-hour volume of every market at once (sort=volume24h): the recent trades by time.
CREATE INDEX market_trades_at ON market_trades (at) INCLUDE (market_id, shares, price);
