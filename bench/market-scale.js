// Market search, sort and history at scale (docs/performance.md#market-data-at-scale): MARKETS
// markets created through ingestion (their search vectors, outcomes and creators exactly as ingestion
// writes them), TRADES trades bulk-loaded across them (one market holding BIG_TRADES of them), then
// p50/p99 of the list's search (one and two words), of a page deep in the `volume` order by cursor,
// of a market's history (a day at 1m, a year at 1d) and of its trades, each read through the routes'
// own functions (readList, readHistory, readTrades) — the database work and the Node.js code behind
// the route, without HTTP — CONNECTIONS at a time. Each list read twice: "cold", the first read of
// its filter set (the page and its count: what a new search or a first page costs), and "total
// kept", a page the route's page cache does not hold (another page or cursor of the same filters)
// with the count kept by the route's total cache (docs/markets.md#total) — and once "route, page
// cached": the same page again, as the route's list cache serves it.
//
//   npm run build && BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_scale node bench/market-scale.js
//   MARKETS=10000 TRADES=1000000 BIG_TRADES=100000 EMBEDDED=1 node bench/market-scale.js   # PGlite
//   ANALYZE=0 …   # no ANALYZE after the bulk load: the statistics as the migrations left them
//   VACUUM=0 …    # PostgreSQL: ANALYZE only, no VACUUM after the load (see below)
//
// On PostgreSQL the loaded tables are vacuumed (VACUUM (ANALYZE)) after the load, and before a run on
// data a load left unvacuumed: what autovacuum does to a table after a bulk insert on a production
// server. This machine's PostgreSQL runs with autovacuum off (its CI configuration), and a table that
// was never vacuumed has no visibility map and no hint bits: every count is a sequential scan and
// every read pays for the first look at its rows (docs/performance.md#vacuumed-data). The embedded
// database is only analyzed: the state between two passes of its worker's maintenance, which vacuums
// and analyzes every EMBEDDED_ANALYZE_INTERVAL_MS (docs/operations.md#embedded-statistics).
//
// The bulk loader: trades are one INSERT … SELECT from generate_series per chunk into market_trades
// (random markets, prices and sizes; the big market's as a minute-spaced walk), and what ingestion
// keeps beside them is built by the same aggregates ingestion's statements amount to: each market's
// trade totals (count, Σ shares × price; zero for a market without trades, as ingestion creates
// them) into market_trade_totals, each outcome's last trade into market_outcome_last (by migration
// 0037's backfill), and the big market's candles by
// the aggregate of the market-data migration's backfill (src/db/migrations/0030_market_data.sql).
// The data stays between runs (a run reuses it when the counts match); drop the database to reload.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate } from '../dist/db/migrate.js';
import { PgliteDatabase } from '../dist/db/pglite.js';
import { PostgresDatabase } from '../dist/db/postgres.js';
import { cursorCodec } from '../dist/http/cursor.js';
import { systemClock } from '../dist/lib/clock.js';
import { silentLog } from '../dist/logger.js';
import { ingestText } from '../dist/markets/ingest/ingest.js';
import { ListCache } from '../dist/markets/read/list-cache.js';
import { readList } from '../dist/markets/search/list.js';
import { parseListQuery } from '../dist/markets/search/query.js';
import { planHistory, readHistory } from '../dist/markets/series/history.js';
import { readTrades, tradesPosition } from '../dist/markets/series/trades.js';
import { buildCandles, buildLastTrades, concurrentCalls, loadMinuteWalk, percentile } from './lib.js';
import { marketCreated } from './markets.js';

const EMBEDDED = process.env.EMBEDDED === '1';
/** Vacuum the loaded tables, as autovacuum would (PostgreSQL only: see above for the embedded database). */
const VACUUM = !EMBEDDED && process.env.VACUUM !== '0';
const url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/bench_scale';
const MARKETS = Number(process.env.MARKETS ?? (EMBEDDED ? 10_000 : 100_000));
const TRADES = Number(process.env.TRADES ?? (EMBEDDED ? 1_000_000 : 10_000_000));
const BIG_TRADES = Number(process.env.BIG_TRADES ?? (EMBEDDED ? 100_000 : 1_000_000));
const RUNS = Number(process.env.RUNS ?? 200);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 5);
const BIG = 'scale-big';
const END = Date.parse('2026-06-01T00:00:00Z');
const DAY = 86_400_000;

// Words of the generated titles: a few common, most rare, as in a real list.
const ASSETS = ['bitcoin', 'ethereum', 'solana', 'jupiter', 'bonk', 'dogecoin', 'cardano', 'ripple'];
const TEAMS = ['lakers', 'celtics', 'arsenal', 'chelsea', 'yankees', 'dodgers', 'ferrari', 'mclaren'];
const VERBS = ['close above', 'close below', 'win', 'lose', 'reach', 'stay under', 'beat', 'draw'];
const CATEGORIES = ['crypto', 'sports', 'politics', 'tech', 'economy'];

function title(i) {
  const subject = i % 2 === 0 ? ASSETS[i % ASSETS.length] : TEAMS[(i >> 1) % TEAMS.length];
  return `Will ${subject} ${VERBS[(i >> 3) % VERBS.length]} ${1000 + (i % 977)} by week ${i % 52}?`;
}

function created(i) {
  const at = END - 400 * DAY + Math.floor((i * 400 * DAY) / MARKETS);
  return marketCreated(i === 0 ? BIG : `scale-${i}`, at, CATEGORIES[i % CATEGORIES.length], false, title(i));
}

const db = EMBEDDED
  ? (await PgliteDatabase.open(process.env.DATA_DIR ?? mkdtempSync(join(tmpdir(), 'sibyl-scale-')))).db
  : new PostgresDatabase(url, { poolSize: CONNECTIONS });
await migrate(db);

const count = async (sql) => (await db.query(sql))[0].n;
if ((await count('SELECT count(*)::int AS n FROM markets')) !== MARKETS) {
  const started = performance.now();
  for (let i = 0; i < MARKETS; i += 2_000) {
    const lines = [];
    for (let j = i; j < Math.min(MARKETS, i + 2_000); j++) lines.push(JSON.stringify(created(j)));
    const report = await ingestText(db, `${lines.join('\n')}\n`);
    if (report.refused > 0)
      throw new Error(
        `ingestion refused ${report.refused} market creations: ${JSON.stringify(report.reports[0])}`,
      );
  }
  console.log(
    `created ${MARKETS} markets through ingestion in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}
if ((await count('SELECT count(*)::int AS n FROM market_trades')) !== TRADES) {
  const started = performance.now();
  await db.exec(
    'DELETE FROM market_candles; DELETE FROM market_trade_totals; DELETE FROM market_outcome_last; DELETE FROM market_trades',
  );
  // The big market: a minute-spaced random walk, the newest at END.
  await loadMinuteWalk(db, BIG, 'b-', END, BIG_TRADES);
  // The rest over every other market, spread over the last 30 days, in chunks of a million.
  const rest = TRADES - BIG_TRADES;
  for (let from = 1; from <= rest; from += 1_000_000) {
    const to = Math.min(rest, from + 999_999);
    await db.query(
      `INSERT INTO market_trades (trade_id, market_id, outcome_index, price, shares, buyer, seller, at)
       SELECT 't-' || g, 'scale-' || (1 + (hashint4(g) & 2147483647) % ($1::int - 1)), g % 2,
              100 + (hashint4(g + 3) & 16383) % 9800, 1 + (hashint4(g + 5) & 65535),
              'So11111111111111111111111111111111111111112', 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
              $2::timestamptz - make_interval(secs => (hashint4(g + 9) & 2147483647) % 2592000)
         FROM generate_series($3::int, $4::int) AS g`,
      [MARKETS, new Date(END).toISOString(), from, to],
    );
  }
  await db.exec(
    `INSERT INTO market_trade_totals (market_id, trades, notional)
     SELECT m.id, count(t.market_id), COALESCE(sum(t.shares::numeric * t.price), 0)
       FROM markets m LEFT JOIN market_trades t ON t.market_id = m.id GROUP BY m.id`,
  );
  await buildCandles(db, BIG);
  await buildLastTrades(db);
  // ANALYZE=0 leaves the planner's statistics as the migrations left them (an embedded service has
  // no autovacuum): docs/performance.md#embedded-statistics.
  if (process.env.ANALYZE !== '0' && (EMBEDDED || !VACUUM)) await db.exec('ANALYZE');
  console.log(
    `loaded ${TRADES} trades, totals and the big market's candles in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}
if (
  VACUUM &&
  (await count(`SELECT relallvisible::int AS n FROM pg_class WHERE relname = 'market_trades'`)) === 0
) {
  const started = performance.now();
  await db.exec(
    'VACUUM (ANALYZE) markets, market_outcomes, market_trades, market_trade_totals, market_outcome_last, market_candles, market_orders',
  );
  console.log(`vacuumed the loaded tables in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

const p = percentile;
/** RUNS calls of fn, CONNECTIONS at a time (after one warm-up call each): p50 and p99 of each call. */
async function measure(name, fn) {
  const { times, cpuUs, wallMs: wall } = await concurrentCalls(fn, { runs: RUNS, connections: CONNECTIONS });
  const line = `${name}: p50 ${p(times, 0.5).toFixed(1)} ms, p99 ${p(times, 0.99).toFixed(1)} ms, ${((RUNS * 1000) / wall).toFixed(0)}/s, Node.js CPU ${cpuUs.toFixed(0)} µs a call`;
  console.log(line);
  return line;
}

const now = new Date(END);
// Cursors signed with a key of this run: the bench reads its own pages only.
const cursors = cursorCodec(randomBytes(32));
const deps = { db, now, cursors, solUsd: async () => 150 };
const list = (query) => readList(deps, parseListQuery(query, cursors));
// The route's caches (src/markets/wiring.ts): pages by query and page or cursor, totals by filter set.
const caches = { db, clock: systemClock, log: silentLog, enabled: true };
const totals = new ListCache(caches);
const pages = new ListCache(caches);
const kept = (query) => readList({ ...deps, totals }, parseListQuery(query, cursors));
const routed = (query) => {
  const plan = parseListQuery(query, cursors);
  const key = `${plan.fingerprint}\u0000${plan.page ?? ''}\u0000${plan.after ? `${plan.after.key}\u0000${plan.after.id}` : ''}\u0000${plan.pageSize}`;
  return pages.get(key, () => readList({ ...deps, totals }, plan));
};
// Until a cache is listening every read goes to the database: start both and wait for them.
for (let i = 0; i < 50 && (totals.size === 0 || pages.size === 0); i++) {
  await totals.get('warm', async () => 0);
  await pages.get('warm', async () => 0);
  await new Promise((resolve) => setTimeout(resolve, 100));
}
if (totals.size === 0 || pages.size === 0) throw new Error('the list caches never started listening');
/** Cold (counts), then with the total kept (the page read). */
async function both(name, query) {
  await measure(`${name}, cold`, () => list(query));
  await measure(`${name}, total kept`, () => kept(query));
}

console.log(
  `${MARKETS} markets, ${TRADES} trades (${BIG_TRADES} in one market); ${CONNECTIONS} at a time, ${RUNS} calls each; ${EMBEDDED ? 'embedded PGlite' : 'PostgreSQL'}`,
);
const hits1 = (await list({ q: 'bitcoin' })).total;
const hits2 = (await list({ q: 'bitcoin above' })).total;
await both(`search q=bitcoin (${hits1} matches), relevance`, { q: 'bitcoin' });
await measure('search q=bitcoin, route, page cached', () => routed({ q: 'bitcoin' }));
await both(`search q="bitcoin above" (${hits2} matches), relevance`, { q: 'bitcoin above' });
await both('search q="sol" (prefix of the last word)', { q: 'sol' });
// A cursor 100 pages of 50 deep in the volume order (5,000 markets in).
let cursor;
for (let i = 0; i < 100; i++) cursor = (await list({ sort: 'volume', cursor })).nextCursor ?? cursor;
await both('sort=volume, page 101 of 50 by cursor', { sort: 'volume', cursor });
let created100;
for (let i = 0; i < 100; i++)
  created100 = (await list({ sort: 'createdAt', cursor: created100 })).nextCursor ?? created100;
await both('sort=createdAt, page 101 of 50 by cursor', { sort: 'createdAt', cursor: created100 });
await both('the spec list, page 3 of 50 (no new parameter)', { page: 3 });
// 1,000 minutes: the longest 1m range the 1,000-point limit allows (a full day is 1,440 points).
const day = planHistory(
  {
    interval: '1m',
    startTime: new Date(END - 1000 * 60_000).toISOString(),
    endTime: new Date(END).toISOString(),
  },
  now,
);
const year = planHistory(
  {
    interval: '1d',
    startTime: new Date(END - 365 * DAY).toISOString(),
    endTime: new Date(END).toISOString(),
  },
  now,
);
await measure(`history of ${BIG}, 1,000 minutes at 1m`, () => readHistory(db, BIG, day));
await measure(`history of ${BIG}, a year at 1d`, () => readHistory(db, BIG, year));
await measure('trades, first page of 100', () =>
  readTrades(db, BIG, { limit: 100 }, tradesPosition(BIG, {}, cursors), 150, cursors),
);
await totals.close();
await pages.close();
await db.close();
