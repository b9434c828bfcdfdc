import { statement } from '../db/database.js';
import { pruneStatement } from '../db/prune.js';

/** The channel every transaction that writes market stream events notifies, once (docs/streams.md#markets). */
export const MARKET_STREAM_CHANNEL = 'market_stream';
/** The one payload sent on it: the process reader is one topic of the fan-out. */
export const MARKET_STREAM_TOPIC = 'm';

/** Events are kept (and `Last-Event-ID` resumes) this long: a fixed contract of the stream. */
export const MARKET_STREAM_RETENTION_MS = 24 * 3_600_000;

// Held until the transaction commits: ids are taken, and the rows committed, one writer at a time.
// The key is the text 'market_stream' as a bigint (its first 8 bytes), fixed so that every process agrees.
export const LOCK = statement('market_stream_lock', `SELECT pg_advisory_xact_lock(7881694946571531629)`);

/**
 * No JIT compilation for the rest of the writer's transaction. PostgreSQL compiles a statement at
 * each execution whose estimated cost passes `jit_above_cost` (100,000 by default); CHANGED's does
 * once a transaction changes a hundred markets or so (an ingestion chunk of trades), and compiling
 * it then took far longer than running it: 0.7 s of compilation for 0.2 s of execution, each chunk
 * (docs/performance.md#trade-ingestion-before-and-after-the-candle-upkeep). A plain SET: no plan.
 */
export const NO_JIT = 'SET LOCAL jit = off';

/** Takes `$1` ids from the sequence at once (under the lock): returns the last; the first is last − $1 + 1. */
export const TAKE_IDS = statement(
  'market_stream_take_ids',
  `SELECT setval('market_stream_ids', nextval('market_stream_ids') + $1::bigint - 1)::text AS last`,
);

/**
 * The events `$2`/`$3`, ids from `$1` on, their data the elements of the JSON array `$4` in order.
 * One JSON text rather than a `text[]`: the driver sends it as it is, where each element of an array
 * is quoted and escaped into an array literal, which cost the service more than the events' JSON
 * (docs/performance.md#trade-ingestion-before-and-after-the-candle-upkeep). `json` (not `jsonb`)
 * keeps each element's text exactly as it was written.
 */
export const INSERT = statement(
  'market_stream_insert',
  `INSERT INTO market_stream_events (id, market_id, kind, data, created_at)
   SELECT $1::bigint + e.n - 1, e.market_id, e.kind, d.data::text, clock_timestamp()
     FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS e (market_id, kind, n)
     JOIN json_array_elements($4::json) WITH ORDINALITY AS d (data, n) USING (n)`,
);

export const NOTIFY = statement(
  'market_stream_notify',
  `SELECT pg_notify('${MARKET_STREAM_CHANNEL}', '${MARKET_STREAM_TOPIC}')`,
);

/** The markets of filled or cancelled orders: their books changed. */
export const ORDER_MARKETS = statement(
  'market_stream_order_markets',
  `SELECT DISTINCT market_id FROM market_orders WHERE order_id = ANY($1::text[])`,
);

/**
 * What a `market` event says of each market (`$1`): status, resolution, trade totals, and per outcome
 * its last trade price (kept by ingestion, migration 0037) and best bid and ask (the open orders'
 * index), from which the probability is computed as GET /markets/{id} computes it.
 */
const STATE = `m.id, m.status, m.winning_outcome_index, m.resolved_at,
       COALESCE(t.trades, 0)::int AS trades,
       floor(COALESCE(t.notional, 0) / 10000)::text AS volume,
       (SELECT json_agg(json_build_object(
                 'index', o.outcome_index, 'label', o.label, 'lastPrice', lp.price,
                 'bestBid', (SELECT max(b.price) FROM market_orders b
                              WHERE b.market_id = o.market_id AND b.outcome_index = o.outcome_index
                                AND b.side = 'bid' AND b.open_shares > 0),
                 'bestAsk', (SELECT min(a.price) FROM market_orders a
                              WHERE a.market_id = o.market_id AND a.outcome_index = o.outcome_index
                                AND a.side = 'ask' AND a.open_shares > 0))
               ORDER BY o.outcome_index)
          FROM market_outcomes o
          LEFT JOIN market_outcome_last lp ON lp.market_id = o.market_id AND lp.outcome_index = o.outcome_index
         WHERE o.market_id = m.id) AS outcomes
  FROM markets m
  LEFT JOIN market_trade_totals t ON t.market_id = m.id
 WHERE m.id = ANY($1::text[])`;

/**
 * The writer's view: each changed market's state now, and the data of its last `market` event. That
 * event is nearly always the market's newest event of any kind (the writer puts a transaction's
 * `market` events after its trades), which the (market_id, id) index finds in one step; the search
 * by kind runs only when it is not (after a `resolved` event, say). Asked by kind directly, the
 * planner read every event the market had in the last 24 hours, each time: ingestion slowed as the
 * day's trades grew (docs/performance.md#trade-ingestion-before-and-after-the-candle-upkeep).
 */
export const CHANGED = statement(
  'market_stream_changed',
  `SELECT ${STATE.replace(
    'AS outcomes',
    `AS outcomes,
       (SELECT CASE WHEN n.kind = 'market' THEN n.data
                    ELSE (SELECT e.data FROM market_stream_events e
                           WHERE e.market_id = m.id AND e.kind = 'market' ORDER BY e.id DESC LIMIT 1) END
          FROM (SELECT x.kind, x.data FROM market_stream_events x
                 WHERE x.market_id = m.id ORDER BY x.id DESC LIMIT 1) n) AS last`,
  )}`,
);

/**
 * A stream's snapshot: each market's state and, in the same statement (so the same view), the newest
 * event id: the snapshot holds everything up to it, the stream goes on from there.
 */
export const SNAPSHOT = statement(
  'market_stream_snapshot',
  `SELECT ${STATE.replace(
    'AS outcomes',
    `AS outcomes,
       (SELECT COALESCE(max(id), 0)::text FROM market_stream_events) AS up_to`,
  )}`,
);

/** Which of the asked ids (`$1`) are markets a stream may follow: not DRAFT (as GET /markets/{id}). */
export const STREAMABLE = statement(
  'market_stream_streamable',
  `SELECT id FROM markets WHERE id = ANY($1::text[]) AND status <> 'DRAFT'`,
);

/** Whether an event id is still kept: a resume point within the last 24 hours. */
export const KEPT = statement(
  'market_stream_kept',
  `SELECT EXISTS (SELECT 1 FROM market_stream_events WHERE id = $1::bigint) AS kept`,
);

/**
 * Which of the markets `$3` have a `market` event after `$1` and up to `$2`: on a resume, the replay
 * brings those up to date; each of the others is sent its state first (docs/streams.md#markets).
 */
export const CHANGED_SINCE = statement(
  'market_stream_changed_since',
  `SELECT DISTINCT market_id FROM market_stream_events
    WHERE kind = 'market' AND id > $1::bigint AND id <= $2::bigint AND market_id = ANY($3::text[])`,
);

/** The newest event id: where a process starts reading when it starts listening. */
export const NEWEST = statement(
  'market_stream_newest',
  `SELECT COALESCE(max(id), 0)::text AS id FROM market_stream_events`,
);

/** The events after `$1` of the markets `$2`, in id (commit) order, at most `$3`. */
export const AFTER = statement(
  'market_stream_after',
  `SELECT id::text, market_id, kind, data FROM market_stream_events
    WHERE id > $1::bigint AND market_id = ANY($2::text[])
    ORDER BY market_stream_events.id LIMIT $3`,
);

export const PRUNE = pruneStatement({
  name: 'market_stream_prune',
  table: 'market_stream_events',
  key: 'id',
  ended: 'created_at < $1',
  orderBy: 'created_at',
});
