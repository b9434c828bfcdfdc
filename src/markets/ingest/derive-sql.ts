import { statement } from '../../db/database.js';

/**
 * Statements of the work derived from a chunk after it commits (docs/markets.md#derived-after-commit;
 * migration 0038): the backlog row each chunk leaves, taken by the transaction that does its work, and
 * the candles of its trades.
 */

/**
 * The worker's channel. Nothing notifies it: a row is due `MARKETS_DERIVE_AFTER_MS` after it was
 * written (only when its ingestion did not take it), and the worker wakes at the next due time.
 */
export const DERIVE_CHANNEL = 'markets_derive';

/** The chunk's changes as JSON; its id. Inserted by the chunk's own transaction. */
export const ENQUEUE = statement(
  'markets_derive_enqueue',
  `INSERT INTO market_derive_backlog (changes) VALUES ($1) RETURNING id::text AS id`,
);

/**
 * Taken by the ingestion that wrote them, right after their commits: the rows are locked until this
 * transaction ends, so a worker's claim skips them, and gone once it commits. Those a worker took
 * are not returned.
 */
export const TAKE = statement(
  'markets_derive_take',
  `DELETE FROM market_derive_backlog WHERE id = ANY($1::bigint[]) AND lease_token IS NULL RETURNING id::text AS id`,
);

/** Taken by the worker that claimed it, only while it still holds the lease. */
export const TAKE_LEASED = statement(
  'markets_derive_take_leased',
  `DELETE FROM market_derive_backlog WHERE id = $1::bigint AND lease_token = $2 RETURNING id`,
);

/**
 * A worker's claim ($1 now, $2 rows, $3 lease token, $4 lease in ms, $5 how long a row is left to the
 * ingestion that wrote it, in ms): rows older than that whose lease is free or lapsed, oldest first.
 */
export const CLAIM = statement(
  'markets_derive_claim',
  `UPDATE market_derive_backlog
      SET lease_token = $3, lease_until = $1::timestamptz + make_interval(secs => $4::double precision / 1000),
          attempts = attempts + 1
    WHERE id IN (SELECT id FROM market_derive_backlog
                  WHERE enqueued_at <= $1::timestamptz - make_interval(secs => $5::double precision / 1000)
                    AND (lease_until IS NULL OR lease_until <= $1)
                  ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)
   RETURNING id::text AS id, changes, lease_token, attempts`,
);

/** When the next row becomes due ($1: the wait in ms), if any. */
export const NEXT_DUE = statement(
  'markets_derive_next_due',
  `SELECT min(greatest(enqueued_at + make_interval(secs => $1::double precision / 1000),
                       coalesce(lease_until, '-infinity'))) AS next
     FROM market_derive_backlog`,
);

/**
 * Each outcome's candles (1 minute, 1 hour, 1 day) gain the trades' prices and shares (the trades
 * recorded by a chunk: trade id, market, outcome, price, shares, at). A trade that arrives late (an
 * older `at`) lands in its own bucket and becomes that bucket's open or close only if it is the
 * earliest or latest there by (at, trade id), so chunks may be derived in any order, and a chunk
 * derived twice would count its trades twice: the backlog row's delete, in the same transaction,
 * makes that impossible.
 * The trades are summed once per (market, outcome, minute), with one sort and window aggregates over
 * whole partitions (not four ordered aggregates per group, each its own sort), and the hour and day
 * candles from those minute rows: a minute's open is its earliest trade, so the earliest minute's
 * open is the hour's (docs/performance.md#trade-ingestion-before-and-after-the-candle-upkeep). Rows
 * in key order: two writers wait for each other rather than deadlock.
 */
export const UPSERT_CANDLES = statement(
  'markets_upsert_candles',
  `WITH inserted AS (
     SELECT t.trade_id, t.market_id, t.outcome AS outcome_index, t.price, t.shares::bigint AS shares, t.at
       FROM unnest($1::text[], $2::text[], $3::int[], $4::int[], $5::text[], $6::timestamptz[])
            AS t (trade_id, market_id, outcome, price, shares, at)
   ), minutes AS (
     SELECT DISTINCT ON (market_id, outcome_index, bucket) market_id, outcome_index, bucket,
            first_value(price) OVER w AS open, max(price) OVER w AS high, min(price) OVER w AS low,
            last_value(price) OVER w AS close, sum(shares) OVER w AS volume, count(*) OVER w AS trades,
            first_value(at) OVER w AS open_at, first_value(trade_id) OVER w AS open_trade,
            last_value(at) OVER w AS close_at, last_value(trade_id) OVER w AS close_trade
       FROM (SELECT i.*, date_bin('60 s', i.at, timestamptz '1970-01-01 00:00:00+00') AS bucket FROM inserted i) i
     WINDOW w AS (PARTITION BY market_id, outcome_index, bucket ORDER BY at, trade_id
                  ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
   ), wider AS (
     SELECT DISTINCT ON (market_id, outcome_index, width, wide) market_id, outcome_index, width, wide AS bucket,
            first_value(open) OVER w AS open, max(high) OVER w AS high, min(low) OVER w AS low,
            last_value(close) OVER w AS close, sum(volume) OVER w AS volume, sum(trades) OVER w AS trades,
            first_value(open_at) OVER w AS open_at, first_value(open_trade) OVER w AS open_trade,
            last_value(close_at) OVER w AS close_at, last_value(close_trade) OVER w AS close_trade
       FROM (SELECT m.*, w.width,
                    date_bin(make_interval(secs => w.width), m.bucket, timestamptz '1970-01-01 00:00:00+00') AS wide
               FROM minutes m CROSS JOIN (VALUES (3600), (86400)) AS w (width)) m
     WINDOW w AS (PARTITION BY market_id, outcome_index, width, wide ORDER BY bucket
                  ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
   )
   INSERT INTO market_candles AS c (market_id, outcome_index, width, bucket, open, high, low, close, volume,
                                    trades, open_at, open_trade, close_at, close_trade)
   SELECT market_id, outcome_index, 60, bucket, open, high, low, close, volume, trades,
          open_at, open_trade, close_at, close_trade FROM minutes
    UNION ALL
   SELECT market_id, outcome_index, width, bucket, open, high, low, close, volume, trades,
          open_at, open_trade, close_at, close_trade FROM wider
    ORDER BY 1, 2, 3, 4
       ON CONFLICT (market_id, outcome_index, width, bucket) DO UPDATE
      SET high = greatest(c.high, excluded.high),
          low = least(c.low, excluded.low),
          open = CASE WHEN (excluded.open_at, excluded.open_trade) < (c.open_at, c.open_trade)
                      THEN excluded.open ELSE c.open END,
          open_at = CASE WHEN (excluded.open_at, excluded.open_trade) < (c.open_at, c.open_trade)
                         THEN excluded.open_at ELSE c.open_at END,
          open_trade = CASE WHEN (excluded.open_at, excluded.open_trade) < (c.open_at, c.open_trade)
                            THEN excluded.open_trade ELSE c.open_trade END,
          close = CASE WHEN (excluded.close_at, excluded.close_trade) > (c.close_at, c.close_trade)
                       THEN excluded.close ELSE c.close END,
          close_at = CASE WHEN (excluded.close_at, excluded.close_trade) > (c.close_at, c.close_trade)
                          THEN excluded.close_at ELSE c.close_at END,
          close_trade = CASE WHEN (excluded.close_at, excluded.close_trade) > (c.close_at, c.close_trade)
                             THEN excluded.close_trade ELSE c.close_trade END,
          volume = c.volume + excluded.volume,
          trades = c.trades + excluded.trades`,
);
