import { statement } from '../db/database.js';

/**
 * Stored candles and empty markers (close IS NULL) of the given venues for one token and interval,
 * over buckets opening in [$3, $4). The primary key (token_key, bucket_interval, open_time, venue)
 * makes this one index range scan; a 1000-bucket range over five venues is at most 5,000 rows.
 */
export const SELECT_CANDLES = statement(
  'historical_select_candles',
  `SELECT venue, open_time, close, volume_usd
     FROM venue_candles
    WHERE token_key = $1
      AND bucket_interval = $2
      AND open_time >= $3
      AND open_time < $4
      AND venue = ANY($5::text[])`,
);

/**
 * Stores closed candles and empty markers of one request in one statement (parallel arrays, one
 * element per row; open times in epoch milliseconds, which both drivers pass as plain numbers).
 * ON CONFLICT DO NOTHING: a concurrent request that stored the same bucket first wins, and a closed
 * bucket does not change, so nothing is lost.
 */
export const INSERT_CANDLES = statement(
  'historical_insert_candles',
  `INSERT INTO venue_candles (token_key, bucket_interval, open_time, venue, open, high, low, close, volume_usd)
   SELECT $1, $2, to_timestamp(r.open_ms / 1000), r.venue, r.open, r.high, r.low, r.close, r.volume_usd
     FROM unnest($3::text[], $4::float8[], $5::float8[], $6::float8[], $7::float8[], $8::float8[], $9::float8[])
          AS r (venue, open_ms, open, high, low, close, volume_usd)
       ON CONFLICT DO NOTHING`,
);

/**
 * The stored candles (not the empty markers) of one token in the buckets given as parallel arrays
 * of intervals and open times (epoch milliseconds): one primary-key lookup per bucket.
 */
export const SELECT_CANDLES_AT = statement(
  'historical_select_candles_at',
  `SELECT c.bucket_interval, c.venue, c.close, c.volume_usd
     FROM unnest($2::text[], $3::float8[]) AS b (bucket_interval, open_ms)
     JOIN venue_candles c
       ON c.token_key = $1
      AND c.bucket_interval = b.bucket_interval
      AND c.open_time = to_timestamp(b.open_ms / 1000)
    WHERE c.close IS NOT NULL`,
);
