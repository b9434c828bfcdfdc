-- Venue candles behind GET /historical/price/:symbol (docs/prices.md, "Historical prices").
--
-- One row per (venue, token, interval, bucket). A row whose prices are all NULL is an "empty
-- marker": the venue answered for a range containing this bucket and had no candle for it (Kraken
-- and OKX only reach their most recent buckets; Coinbase skips buckets without trades). Markers let
-- a repeated range skip buckets the venue cannot fill instead of asking for them again.
--
-- Only closed buckets (bucket end <= now) are ever written, candles and markers alike: the open
-- bucket is always fetched fresh. Rows are written with ON CONFLICT DO NOTHING, so concurrent
-- requests filling the same buckets never fail; a closed candle does not change, so the first
-- writer's row is as good as the second's.
CREATE TABLE venue_candles (
  token_key       text NOT NULL,
  bucket_interval text NOT NULL CHECK (bucket_interval IN ('1m', '5m', '15m', '1h', '4h', '1d')),
  -- Start of the bucket, a UTC multiple of the interval.
  open_time       timestamptz NOT NULL,
  venue           text NOT NULL,
  open            double precision,
  high            double precision,
  low             double precision,
  close           double precision,
  -- USD traded in the bucket; NULL when the venue does not report per-bucket volume (CoinGecko).
  volume_usd      double precision,
  fetched_at      timestamptz NOT NULL DEFAULT now(),
  -- Reads ask for one token and interval over a range of buckets, for every venue at once.
  PRIMARY KEY (token_key, bucket_interval, open_time, venue),
  CONSTRAINT venue_candles_marker_or_candle CHECK (
    (open IS NULL AND high IS NULL AND low IS NULL AND close IS NULL AND volume_usd IS NULL)
    OR (open IS NOT NULL AND high IS NOT NULL AND low IS NOT NULL AND close IS NOT NULL)
  )
);
