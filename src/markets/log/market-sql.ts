import { statement } from '../../db/database.js';
import { pruneStatement } from '../../db/prune.js';

/** The channel every transaction that writes market stream events notifies, once (docs/streams.md#markets). */
export const MARKET_STREAM_CHANNEL = 'market_stream';
/** The one payload sent on it: the process reader is one topic of the fan-out. */
export const MARKET_STREAM_TOPIC = 'm';

/** Events are kept (and `Last-Event-ID` resumes) this long: a fixed contract of the stream. */
export const MARKET_STREAM_RETENTION_MS = 24 * 3_600_000;

/**
 * Held until the transaction commits: ids are taken, and the rows committed, one writer at a time.
 * The key is the text 'market_stream' as a bigint (its first 8 bytes), fixed so that every process
 * agrees. In the same round trip, no JIT compilation for the rest of the writer's transaction
 * (`set_config(…, true)` is `SET LOCAL`): PostgreSQL compiles a statement at each execution whose
 * estimated cost passes `jit_above_cost` (100,000 by default); CHANGED's does once a transaction
 * changes a hundred markets or so (an ingestion chunk of trades), and compiling it then took far
 * longer than running it: 0.7 s of compilation for 0.2 s of execution, each chunk
 * (docs/performance.md#trade-ingestion-before-and-after-the-candle-upkeep).
 */
export const LOCK = statement(
  'market_stream_lock',
  `SELECT pg_advisory_xact_lock(7881694946571531629), set_config('jit', 'off', true)`,
);

/**
 * Between the rows of INSERT's data: the ASCII record separator, which no line of JSON holds
 * (`JSON.stringify` escapes every control character in a string, and writes none elsewhere).
 */
export const ROW_SEPARATOR = '\x1e';

/**
 * The rows `$1`/`$2`/`$3` (market, kind, how many events: a market's trades share a row, migration
 * 0042), `$4` events in all, their data the parts of `$5` between record separators (each part the
 * row's lines, one event per line), in order; ids taken from the sequence at once (under the lock:
 * they ascend in commit order), a row's id its last event's; and the one notification. One
 * statement, one round trip, where taking the ids, inserting and notifying were three
 * (docs/performance.md#stream-writer-cost). The sequence is read in a CTE, which a volatile function
 * keeps from being inlined: once per statement.
 *
 * The data as one text rather than a `text[]`: the driver sends it as it is, where each element of
 * an array is quoted and escaped into an array literal, which cost the service more than the
 * events' JSON (docs/performance.md#trade-ingestion-before-and-after-the-candle-upkeep). `ROWS FROM`
 * walks the lists in step, without a join (docs/performance.md#stream-writer-cost).
 */
export const INSERT = statement(
  'market_stream_insert',
  `WITH taken AS (
     SELECT setval('market_stream_ids', nextval('market_stream_ids') + $4::int - 1) - $4::int AS before
   ), inserted AS (
     INSERT INTO market_stream_events (id, market_id, kind, events, data, created_at)
     SELECT taken.before + sum(e.events) OVER (ORDER BY e.n), e.market_id, e.kind, e.events, e.data,
            clock_timestamp()
       FROM taken, ROWS FROM (unnest($1::text[]), unnest($2::text[]), unnest($3::int[]),
                              string_to_table($5::text, E'\\x1e'))
                   WITH ORDINALITY AS e (market_id, kind, events, data, n)
   )
   SELECT pg_notify('${MARKET_STREAM_CHANNEL}', '${MARKET_STREAM_TOPIC}')`,
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
 *
 * Not read (null) for a market among `$2`, those the transaction recorded trades of, while it is
 * unresolved: its trade count has grown, so its state differs from any earlier event's whatever that
 * said, and without a resolution there is no `resolved` event to decide. An ingestion chunk's markets
 * are nearly all such: the lookup was a fifth of this statement's time
 * (docs/performance.md#stream-writer-cost).
 */
export const CHANGED = statement(
  'market_stream_changed',
  `SELECT ${STATE.replace(
    'AS outcomes',
    `AS outcomes,
       CASE WHEN m.winning_outcome_index IS NULL AND m.id = ANY($2::text[]) THEN NULL ELSE
       (SELECT CASE WHEN n.kind = 'market' THEN n.data
                    ELSE (SELECT e.data FROM market_stream_events e
                           WHERE e.market_id = m.id AND e.kind = 'market' ORDER BY e.id DESC LIMIT 1) END
          FROM (SELECT x.kind, x.data FROM market_stream_events x
                 WHERE x.market_id = m.id ORDER BY x.id DESC LIMIT 1) n) END AS last`,
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

/**
 * Whether an event id is still kept: a resume point within the last 24 hours. The row that holds it
 * is the first whose id (its last event's) is not below it, if that row begins at or before it.
 */
export const KEPT = statement(
  'market_stream_kept',
  `SELECT EXISTS (SELECT 1 FROM (SELECT id, events FROM market_stream_events WHERE id >= $1::bigint
                                  ORDER BY id LIMIT 1) r
                   WHERE r.id - r.events < $1::bigint) AS kept`,
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

/**
 * The rows holding events after `$1` of the markets `$2`, in id (commit) order, at most `$3` rows:
 * the first may also hold events up to `$1`, which the reader skips (market-feed.ts `readEvents`).
 */
export const AFTER = statement(
  'market_stream_after',
  `SELECT id::text, market_id, kind, events, data FROM market_stream_events
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
