import { statement } from '../../db/database.js';
import { pruneStatement } from '../../db/prune.js';

/**
 * Statements of ingestion. Each takes a whole chunk of events of one type as parallel arrays
 * (amounts as text, cast here, so both drivers pass them the same way): one round trip per type per
 * chunk instead of one per event. Rows that several events change are reduced in memory to the
 * newest event per row first, because one INSERT … ON CONFLICT DO UPDATE may not touch a row twice;
 * the `(at, event id) <` guard then keeps whichever is newer, the stored row or the event.
 */

/**
 * Records the chunk's event ids; the ids returned are new, the others were seen before. In id
 * order, as every statement here takes its rows in key order: two ingestions that share events
 * then wait for each other instead of deadlocking.
 */
export const RECORD_EVENTS = statement(
  'markets_record_events',
  `INSERT INTO market_events (id, type, body_sha256, at)
   SELECT e.id, e.type, decode(e.sha, 'hex'), e.at
     FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[]) AS e (id, type, sha, at)
    ORDER BY e.id
       ON CONFLICT (id) DO NOTHING
   RETURNING id`,
);

export const SEEN_EVENTS = statement(
  'markets_seen_events',
  `SELECT id, encode(body_sha256, 'hex') AS sha FROM market_events WHERE id = ANY($1::text[])`,
);

/** Events refused after being recorded (an unknown reference, a conflict) are forgotten again. */
export const FORGET_EVENTS = statement(
  'markets_forget_events',
  'DELETE FROM market_events WHERE id = ANY($1::text[])',
);

export const KNOWN_MARKETS = statement(
  'markets_known',
  'SELECT id, slug, outcome_count FROM markets WHERE id = ANY($1::text[]) OR slug = ANY($2::text[])',
);

export const KNOWN_ORDERS = statement(
  'markets_known_orders',
  'SELECT order_id, shares::text AS shares FROM market_orders WHERE order_id = ANY($1::text[])',
);

/** A creator must exist before their market (foreign key); the username is set after, if newer. */
export const ENSURE_CREATOR = statement(
  'markets_ensure_creator',
  `INSERT INTO market_creators (wallet, username, username_at) VALUES ($1, $2, $3)
       ON CONFLICT (wallet) DO NOTHING`,
);

export const UPDATE_CREATOR = statement(
  'markets_update_creator',
  `UPDATE market_creators SET username = $2, username_at = $3
    WHERE wallet = $1 AND username_at < $3::timestamptz`,
);

/**
 * A market is created once: its id and its slug are both unique, and neither conflict is an error.
 * Its search text (title, outcome labels $21, category, description) is set here, once: none of
 * them changes after creation (migration 0030). Its trade totals start here too, at zero, so every
 * market has a totals row and `sort=volume` walks their index (migration 0033).
 */
export const INSERT_MARKET = statement(
  'markets_insert_market',
  `WITH created AS (
     INSERT INTO markets (id, slug, title, description, category, image_url, market_type, outcome_count,
                          closes_at, fee_bps, lock_period_seconds, creator_wallet, resolution_type,
                          price_symbol, price_condition, price_target, price_tolerance, sandbox,
                          status, status_at, status_event, created_at, search)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
             'OPEN', $19, $20, $19, market_search_vector($3, $4, $5, $21::text[]))
         ON CONFLICT DO NOTHING
     RETURNING id
   ), totals AS (
     INSERT INTO market_trade_totals (market_id, trades, notional) SELECT id, 0, 0 FROM created
   )
   SELECT id FROM created`,
);

export const INSERT_OUTCOMES = statement(
  'markets_insert_outcomes',
  `INSERT INTO market_outcomes (market_id, outcome_index, label)
   SELECT $1, o.ordinality - 1, o.label FROM unnest($2::text[]) WITH ORDINALITY AS o (label, ordinality)`,
);

export const INSERT_ORDERS = statement(
  'markets_insert_orders',
  `INSERT INTO market_orders (order_id, market_id, outcome_index, wallet, side, price, shares, open_shares,
                              state, placed_at, state_at, state_event)
   SELECT o.order_id, o.market_id, o.outcome, o.wallet, o.side, o.price, o.shares::bigint, o.shares::bigint,
          'open', o.at, o.at, o.event_id
     FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::int[], $7::text[],
                 $8::timestamptz[], $9::text[])
          AS o (order_id, market_id, outcome, wallet, side, price, shares, at, event_id)
       ON CONFLICT (order_id) DO NOTHING
   RETURNING order_id`,
);

/** Fills and cancellations: what remains open, and the state that follows from it. */
export const UPDATE_ORDERS = statement(
  'markets_update_orders',
  `UPDATE market_orders o
      SET open_shares = u.open_shares::bigint, state = u.state, state_at = u.at, state_event = u.event_id
     FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::text[])
          AS u (order_id, open_shares, state, at, event_id)
    WHERE o.order_id = u.order_id AND (o.state_at, o.state_event) < (u.at, u.event_id)`,
);

/**
 * Trades are facts: a trade id is recorded once (a second event for it is refused by the caller).
 * The traders table gains the buyer and the seller, the market's trade totals the new trades, each
 * outcome's last trade the newest of them by (at, trade id) when it is newer than the one kept
 * (migration 0037), and each outcome's candles (1 minute, 1 hour, 1 day) the new trades' prices and
 * shares, in the same statement: a trade that arrives late (an older `at`) lands in its own bucket and becomes that
 * bucket's open or close only if it is the earliest or latest there by (at, trade id).
 * The chunk's trades are summed once per (market, outcome, minute), with one sort and window
 * aggregates over whole partitions (not four ordered aggregates per group, each its own sort), and
 * the hour and day candles from those minute rows: a minute's open is its earliest trade, so the
 * earliest minute's open is the hour's (docs/performance.md#trade-ingestion-before-and-after-the-candle-upkeep).
 */
export const INSERT_TRADES = statement(
  'markets_insert_trades',
  `WITH inserted AS (
     INSERT INTO market_trades (trade_id, market_id, outcome_index, price, shares, buyer, seller, at)
     SELECT t.trade_id, t.market_id, t.outcome, t.price, t.shares::bigint, t.buyer, t.seller, t.at
       FROM unnest($1::text[], $2::text[], $3::int[], $4::int[], $5::text[], $6::text[], $7::text[],
                   $8::timestamptz[])
            AS t (trade_id, market_id, outcome, price, shares, buyer, seller, at)
         ON CONFLICT (trade_id) DO NOTHING
     RETURNING trade_id, market_id, outcome_index, buyer, seller, shares, price, at
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
   ), candles AS (
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
            trades = c.trades + excluded.trades
   ), totals AS (
     INSERT INTO market_trade_totals AS t (market_id, trades, notional)
     SELECT market_id, count(*), sum(shares::numeric * price) FROM inserted GROUP BY market_id ORDER BY market_id
         ON CONFLICT (market_id) DO UPDATE
        SET trades = t.trades + excluded.trades, notional = t.notional + excluded.notional
   ), lasts AS (
     INSERT INTO market_outcome_last AS l (market_id, outcome_index, price, at, trade_id)
     SELECT DISTINCT ON (market_id, outcome_index) market_id, outcome_index, price, at, trade_id
       FROM inserted ORDER BY market_id, outcome_index, at DESC, trade_id DESC
         ON CONFLICT (market_id, outcome_index) DO UPDATE
        SET price = excluded.price, at = excluded.at, trade_id = excluded.trade_id
      WHERE (l.at, l.trade_id) < (excluded.at, excluded.trade_id)
   ), traders AS (
     INSERT INTO market_traders (market_id, wallet)
     SELECT market_id, buyer FROM inserted UNION SELECT market_id, seller FROM inserted
     ORDER BY 1, 2
         ON CONFLICT DO NOTHING
   )
   SELECT trade_id FROM inserted`,
);

export const UPSERT_POSITIONS = statement(
  'markets_upsert_positions',
  `INSERT INTO market_positions AS p (market_id, wallet, outcome_index, shares, wagered, at, event_id)
   SELECT u.market_id, u.wallet, u.outcome, u.shares::bigint, u.wagered::bigint, u.at, u.event_id
     FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::timestamptz[], $7::text[])
          AS u (market_id, wallet, outcome, shares, wagered, at, event_id)
       ON CONFLICT (market_id, wallet, outcome_index) DO UPDATE
      SET shares = excluded.shares, wagered = excluded.wagered, at = excluded.at, event_id = excluded.event_id
    WHERE (p.at, p.event_id) < (excluded.at, excluded.event_id)`,
);

export const UPSERT_STAKES = statement(
  'markets_upsert_stakes',
  `INSERT INTO market_stakes AS s (market_id, wallet, username, amount, at, event_id)
   SELECT u.market_id, u.wallet, u.username, u.amount::bigint, u.at, u.event_id
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[])
          AS u (market_id, wallet, username, amount, at, event_id)
       ON CONFLICT (market_id, wallet) DO UPDATE
      SET username = excluded.username, amount = excluded.amount, at = excluded.at, event_id = excluded.event_id
    WHERE (s.at, s.event_id) < (excluded.at, excluded.event_id)`,
);

/**
 * Retention (docs/operations.md#retention): forgets up to $2 event ids recorded before $1; returns
 * how many. What the events set stays; an id sent again after this is no longer recognised as a
 * repeat, and is then treated like any new event (docs/markets.md#rules). Reads market_events_ingested;
 * its shape is `pruneStatement`'s (db/prune.ts).
 */
export const PRUNE_EVENTS = pruneStatement({
  name: 'markets_prune_events',
  table: 'market_events',
  key: 'id',
  ended: 'ingested_at < $1',
  orderBy: 'ingested_at',
});
