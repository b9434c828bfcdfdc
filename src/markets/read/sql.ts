import { statement } from '../../db/database.js';

/**
 * The reads behind the market list and detail. The detail's statements each aggregate one market's
 * rows through an index that starts with market_id, and they run concurrently (on PostgreSQL, on as
 * many connections): a detail costs the slowest of them, not their sum. Amounts are summed as
 * numeric and returned as text, so neither driver rounds them.
 */

/** The market by id or slug (the id wins when a slug equals another market's id), its creator's record. */
export const MARKET = statement(
  'markets_detail_market',
  `SELECT m.*, c.username AS creator_username,
          ARRAY(SELECT label FROM market_outcomes o WHERE o.market_id = m.id ORDER BY o.outcome_index) AS outcome_labels,
          r.finalized, r.cancelled, a.attestation AS official_attestation, a.votes AS official_votes
     FROM markets m
     JOIN market_creators c ON c.wallet = m.creator_wallet
     -- The official resolution's attestation, while the resolution it signed is the market's.
     LEFT JOIN market_resolution_attestations a
       ON a.market_id = m.id AND a.resolution_event = m.resolution_event
     CROSS JOIN LATERAL (
       SELECT count(*) FILTER (WHERE x.status = 'FINALIZED')::int AS finalized,
              count(*) FILTER (WHERE x.status = 'CANCELLED')::int AS cancelled
         FROM markets x WHERE x.creator_wallet = m.creator_wallet
     ) r
    WHERE m.id = $1 OR m.slug = $1
    ORDER BY m.id = $1 DESC
    LIMIT 1`,
);

/**
 * Open orders per (outcome, side, price level), best level first, at most $2 levels a side, with
 * the number of levels each side has. A level's amount is ⌊open shares × price ÷ 10,000⌋ lamports.
 */
export const BOOK = statement(
  'markets_detail_book',
  `SELECT outcome_index, side, price, shares, amount, orders, levels
     FROM (SELECT outcome_index, side, price,
                  sum(open_shares)::text AS shares,
                  floor(sum(open_shares)::numeric * price / 10000)::text AS amount,
                  count(*)::int AS orders,
                  row_number() OVER (PARTITION BY outcome_index, side
                                     ORDER BY CASE WHEN side = 'bid' THEN -price ELSE price END)::int AS level,
                  count(*) OVER (PARTITION BY outcome_index, side)::int AS levels
             FROM market_orders
            WHERE market_id = $1 AND open_shares > 0
            GROUP BY outcome_index, side, price) l
    WHERE level <= $2
    ORDER BY outcome_index, side, level`,
);

/** Positions with shares > 0, per outcome. */
export const POSITIONS = statement(
  'markets_detail_positions',
  `SELECT outcome_index, count(*)::int AS positions, sum(shares)::text AS shares, sum(wagered)::text AS wagered
     FROM market_positions
    WHERE market_id = $1 AND shares > 0
    GROUP BY outcome_index`,
);

/**
 * Volume = ⌊Σ shares × price ÷ 10,000⌋ lamports: all time from the totals kept by ingestion, the
 * last 24 hours (since $2) from the trades themselves, a range of the (market_id, at) index.
 */
export const TRADES = statement(
  'markets_detail_trades',
  `SELECT COALESCE(t.trades, 0)::int AS trades,
          floor(COALESCE(t.notional, 0) / 10000)::text AS volume,
          r.recent_trades, r.recent_volume
     FROM (SELECT 1) one
     LEFT JOIN market_trade_totals t ON t.market_id = $1
    CROSS JOIN (SELECT count(*)::int AS recent_trades,
                       floor(COALESCE(sum(shares::numeric * price), 0) / 10000)::text AS recent_volume
                  FROM market_trades
                 WHERE market_id = $1 AND at > $2) r`,
);

/** Each outcome's last trade price, as ingestion keeps it (migration 0037). */
export const LAST_PRICES = statement(
  'markets_detail_last_prices',
  `SELECT o.outcome_index, t.price
     FROM market_outcomes o
     LEFT JOIN market_outcome_last t ON t.market_id = o.market_id AND t.outcome_index = o.outcome_index
    WHERE o.market_id = $1`,
);

/**
 * Stakes now (removed ones are 0), holders (wallets with shares), and bettors: wallets that traded
 * or hold shares, counted as the traders plus the holders who never traded (an anti-join on the
 * traders' primary key, about half the cost of a UNION of 30,000 wallets).
 */
export const COUNTS = statement(
  'markets_detail_counts',
  `SELECT (SELECT count(*)::int FROM market_stakes WHERE market_id = $1 AND amount > 0) AS stakers,
          (SELECT COALESCE(sum(amount), 0)::text FROM market_stakes WHERE market_id = $1 AND amount > 0) AS staked,
          (SELECT count(DISTINCT wallet)::int FROM market_positions WHERE market_id = $1 AND shares > 0) AS holders,
          (SELECT count(*)::int FROM market_traders WHERE market_id = $1)
          + (SELECT count(DISTINCT p.wallet)::int FROM market_positions p
              WHERE p.market_id = $1 AND p.shares > 0
                AND NOT EXISTS (SELECT 1 FROM market_traders t WHERE t.market_id = $1 AND t.wallet = p.wallet))
            AS bettors`,
);

/** The five largest stakes; equal stakes rank by who reached that stake first, then by wallet. */
export const TOP_CURATORS = statement(
  'markets_detail_top_curators',
  `SELECT s.wallet, s.username, s.amount::text AS amount
     FROM market_stakes s
    WHERE s.market_id = $1 AND s.amount > 0
    ORDER BY s.amount DESC, s.at, s.wallet
    LIMIT 5`,
);

/**
 * One page of the list and the total, in one statement; the total is the sum of the counts the
 * database keeps per (status, category) (migration 0039). DRAFT never shows; the order is total
 * (createdAt newest first, then id), so pages never overlap or skip however many markets are added
 * between requests. One statement per combination of filters, rather than `$1 IS NULL OR …`, so
 * each gets a plan that uses its index. The outer join keeps the total on a page past the end.
 * Times come as epoch milliseconds: the driver's timestamp parser cost 130 µs of a 50-item page's
 * 390 µs of Node.js CPU, a number about a fifth of that. `sort_key` is createdAt to the microsecond,
 * for the page's `nextCursor` (search/sql.ts continues this order).
 */
function listStatement(byStatus: boolean, byCategory: boolean, withTotal: boolean) {
  const filters = [
    "status <> 'DRAFT'",
    ...(byStatus ? ['status = $3'] : []),
    ...(byCategory ? [`category = $${byStatus ? 4 : 3}`] : []),
  ];
  const where = filters.join(' AND ');
  return statement(
    `markets_list${byStatus ? '_status' : ''}${byCategory ? '_category' : ''}${withTotal ? '' : '_page'}`,
    `SELECT ${withTotal ? `(SELECT COALESCE(sum(n), 0)::int FROM market_list_counts WHERE ${where})` : 'NULL::int'} AS total, p.*,
            ARRAY(SELECT label FROM market_outcomes o WHERE o.market_id = p.id ORDER BY o.outcome_index)
              AS outcome_labels
       FROM (SELECT 1) one
       LEFT JOIN (
         SELECT id, slug, title, description, category, status, resolution_type, sandbox,
                extract(epoch FROM created_at)::float8 * 1000 AS created_ms,
                extract(epoch FROM closes_at)::float8 * 1000 AS closes_ms,
                to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS sort_key
           FROM markets
          WHERE ${where}
          ORDER BY created_at DESC, id
          LIMIT $1 OFFSET $2
       ) p ON true
      ORDER BY p.created_ms DESC, p.id`,
  );
}

export const LIST = {
  all: listStatement(false, false, true),
  status: listStatement(true, false, true),
  category: listStatement(false, true, true),
  statusAndCategory: listStatement(true, true, true),
};
/** The same pages without their count, when the total is kept (docs/markets.md#total). */
export const LIST_PAGE = {
  all: listStatement(false, false, false),
  status: listStatement(true, false, false),
  category: listStatement(false, true, false),
  statusAndCategory: listStatement(true, true, false),
};
