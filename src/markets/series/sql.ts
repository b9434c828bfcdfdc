import { statement } from '../../db/database.js';

/** The statements of a market's history and trades (docs/markets.md#history, #trades). */

/** The market an id or a slug names (the id wins), with what the routes need of it. */
export const MARKET_REF = statement(
  'markets_data_market',
  `SELECT id, status, sandbox, ARRAY(SELECT outcome_index FROM market_outcomes o WHERE o.market_id = m.id) AS outcomes
     FROM markets m
    WHERE id = $1 OR slug = $1
    ORDER BY (id = $1) DESC
    LIMIT 1`,
);

/**
 * The close of the outcome's last stored candle before $4, as a row of the same shape (its own
 * bucket's time, before the range): what flat buckets at the range's start carry. A backward probe
 * of the primary key (one row), read in the same statement as the range so that a history is one
 * round trip on one connection (docs/performance.md#market-history-and-trades).
 */
const CARRIED_CLOSE = `(SELECT (extract(epoch FROM bucket) * 1000)::float8 AS time_ms, close AS open, close AS high,
           close AS low, close, '0'::text AS volume, 0::float8 AS trades
      FROM market_candles
     WHERE market_id = $1 AND outcome_index = $2 AND width = $3 AND bucket < $4
     ORDER BY bucket DESC
     LIMIT 1)`;

/**
 * One outcome's stored candles of width $3 opening in [$4, $5), merged into buckets of $6 seconds:
 * one range scan of the primary key. The stored width divides the interval, so every stored candle
 * falls in exactly one bucket; the first stored open and the last stored close are the bucket's.
 * Then the carried close (a row before $4).
 */
export const CANDLES = statement(
  'markets_data_candles',
  `(SELECT (extract(epoch FROM date_bin(make_interval(secs => $6), bucket, timestamptz '1970-01-01 00:00:00+00')) * 1000)::float8 AS time_ms,
          (array_agg(open ORDER BY bucket))[1] AS open, max(high) AS high, min(low) AS low,
          (array_agg(close ORDER BY bucket DESC))[1] AS close, sum(volume)::text AS volume,
          sum(trades)::float8 AS trades
     FROM market_candles
    WHERE market_id = $1 AND outcome_index = $2 AND width = $3 AND bucket >= $4 AND bucket < $5
    GROUP BY 1
    ORDER BY 1)
   UNION ALL
   ${CARRIED_CLOSE}`,
);

/**
 * The same when the stored width is the interval (1m, 1h, 1d): each stored candle is a bucket as it
 * is, read in the primary key's order — no grouping, no sort. Then the carried close.
 */
export const CANDLES_EXACT = statement(
  'markets_data_candles_exact',
  `(SELECT (extract(epoch FROM bucket) * 1000)::float8 AS time_ms, open, high, low, close,
          volume::text AS volume, trades::float8 AS trades
     FROM market_candles
    WHERE market_id = $1 AND outcome_index = $2 AND width = $3 AND bucket >= $4 AND bucket < $5
    ORDER BY bucket)
   UNION ALL
   ${CARRIED_CLOSE}`,
);

const TRADE_COLUMNS = `trade_id, outcome_index, price, shares::text AS shares, buyer, seller,
          to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at_text`;

/**
 * A market's trades before the position ($2 at, $3 trade id), newest first; $4 rows. Each outcome's
 * newest $4 come from the index market_trades_last (one short range each), merged: at most
 * outcomes × $4 rows read, however many trades the market has.
 */
export const TRADES = statement(
  'markets_data_trades',
  `SELECT t.trade_id, t.outcome_index, t.price, t.shares, t.buyer, t.seller, t.at_text
     FROM market_outcomes o
     CROSS JOIN LATERAL (
       SELECT ${TRADE_COLUMNS}, at
         FROM market_trades
        WHERE market_id = $1 AND outcome_index = o.outcome_index
          AND (at, trade_id) < ($2::timestamptz, $3::text)
        ORDER BY at DESC, trade_id DESC
        LIMIT $4
     ) t
    WHERE o.market_id = $1
    ORDER BY t.at DESC, t.trade_id DESC
    LIMIT $4`,
);

/** One outcome's trades before the position, newest first: the index market_trades_last. */
export const OUTCOME_TRADES = statement(
  'markets_data_outcome_trades',
  `SELECT ${TRADE_COLUMNS}
     FROM market_trades
    WHERE market_id = $1 AND outcome_index = $5 AND (at, trade_id) < ($2::timestamptz, $3::text)
    ORDER BY at DESC, trade_id DESC
    LIMIT $4`,
);
