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
 * A history's stored candles travel as one text value, `seconds,open,high,low,close,trades,volume`
 * per candle, `;` between them, oldest first: one field to parse instead of seven a row. At 1,000
 * minutes (500 stored candles) the driver's row parsing was most of the read's Node.js CPU (955 µs of
 * the statement's, against 289 µs for the same candles as one text value; the aggregate costs the
 * database about 0.2 ms more): docs/performance.md#history-as-one-value.
 */
const CANDLE_TEXT = (t: string) => `concat_ws(',', ${t}, open, high, low, close, trades, volume)`;

/**
 * The close of the outcome's last stored candle before $4: what flat buckets at the range's start
 * carry. A backward probe of the primary key (one row), read in the same statement as the range so
 * that a history is one round trip on one connection (docs/performance.md#market-history-and-trades).
 */
const CARRIED_CLOSE = `(SELECT close
      FROM market_candles
     WHERE market_id = $1 AND outcome_index = $2 AND width = $3 AND bucket < $4
     ORDER BY bucket DESC
     LIMIT 1) AS carried`;

/**
 * One outcome's stored candles of width $3 opening in [$4, $5), merged into buckets of $6 seconds:
 * one range scan of the primary key. The stored width divides the interval, so every stored candle
 * falls in exactly one bucket; the first stored open and the last stored close are the bucket's.
 * One row: the carried close, and the buckets as one text value (CANDLE_TEXT).
 */
export const CANDLES = statement(
  'markets_data_candles',
  `SELECT ${CARRIED_CLOSE},
          (SELECT string_agg(${CANDLE_TEXT('t')}, ';' ORDER BY t)
             FROM (SELECT extract(epoch FROM date_bin(make_interval(secs => $6), bucket, timestamptz '1970-01-01 00:00:00+00'))::int8 AS t,
                          (array_agg(open ORDER BY bucket))[1] AS open, max(high) AS high, min(low) AS low,
                          (array_agg(close ORDER BY bucket DESC))[1] AS close, sum(volume) AS volume,
                          sum(trades) AS trades
                     FROM market_candles
                    WHERE market_id = $1 AND outcome_index = $2 AND width = $3 AND bucket >= $4 AND bucket < $5
                    GROUP BY 1) merged) AS candles`,
);

/**
 * The same when the stored width is the interval (1m, 1h, 1d): each stored candle is a bucket as it
 * is, read in the primary key's order — no grouping. One row: the carried close and the candles.
 */
export const CANDLES_EXACT = statement(
  'markets_data_candles_exact',
  `SELECT ${CARRIED_CLOSE},
          (SELECT string_agg(${CANDLE_TEXT('extract(epoch FROM bucket)::int8')}, ';' ORDER BY bucket)
             FROM market_candles
            WHERE market_id = $1 AND outcome_index = $2 AND width = $3 AND bucket >= $4 AND bucket < $5) AS candles`,
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
