// Market history and trades on PostgreSQL (docs/performance.md#market-history-and-trades): one market
// with TRADES trades bulk-loaded (the documented loader below), then p99 of GET /markets/:id/history
// (1,000 minutes at 1m — the longest 1m range the 1,000-point limit allows — and a year at 1d) and of
// the trades pages (first, and deep by cursor), read through the routes' own functions.
//
//   npm run build && BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_md TRADES=1000000 node bench/market-data.js
//
// The bulk loader: the market is created through ingestion (one market.created event); its trades are
// one INSERT … SELECT from generate_series into market_trades (a minute-spaced random walk over
// TRADES minutes, two outcomes), and its candles are built by the same aggregate the migration's
// backfill runs (src/db/migrations/0030_market_data.sql). Ingestion's own throughput is bench/markets.js.

import { randomBytes } from 'node:crypto';
import { migrate } from '../dist/db/migrate.js';
import { PostgresDatabase } from '../dist/db/postgres.js';
import { cursorCodec } from '../dist/http/cursor.js';
import { ingestText } from '../dist/markets/ingest/ingest.js';
import { planHistory, readHistory } from '../dist/markets/series/history.js';
import { readTrades, tradesPosition } from '../dist/markets/series/trades.js';
import { buildCandles, buildLastTrades, loadMinuteWalk } from './lib.js';

const url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/bench_md';
const TRADES = Number(process.env.TRADES ?? 1_000_000);
const RUNS = Number(process.env.RUNS ?? 200);
const ID = 'bench-history';
const END = Date.parse('2026-06-01T00:00:00Z');

const db = new PostgresDatabase(url, { poolSize: 5 });
await migrate(db);
const [have] = await db.query('SELECT count(*)::int AS n FROM market_trades WHERE market_id = $1', [ID]);
if (have.n !== TRADES) {
  const started = performance.now();
  await db.query('DELETE FROM market_candles WHERE market_id = $1', [ID]);
  await db.query('DELETE FROM market_trades WHERE market_id = $1', [ID]);
  const created = {
    id: 'bench-md-created',
    type: 'market.created',
    at: '2024-01-01T00:00:00Z',
    sandbox: true,
    market: {
      id: ID,
      slug: ID,
      title: 'Benchmark history market',
      description: 'bench',
      category: 'crypto',
      imageUrl: 'https://example.com/m.png',
      marketType: 'BINARY',
      outcomes: ['Yes', 'No'],
      closesAt: '2027-01-01T00:00:00Z',
      feeBps: 100,
      lockPeriodSeconds: 86400,
      creator: { wallet: 'So11111111111111111111111111111111111111112', username: 'bench' },
      resolution: { type: 'AI' },
    },
  };
  await ingestText(db, `${JSON.stringify(created)}\n`);
  await loadMinuteWalk(db, ID, 'bt-', END, TRADES);
  await buildCandles(db, ID);
  await buildLastTrades(db);
  await db.query('ANALYZE market_trades');
  await db.query('ANALYZE market_candles');
  console.log(
    `loaded ${TRADES} trades and their candles in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}

const p = (times, q) =>
  [...times].sort((a, b) => a - b)[Math.min(times.length - 1, Math.floor(times.length * q))];
async function measure(name, fn) {
  await fn();
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await fn();
    times.push(performance.now() - started);
  }
  console.log(
    `${name}: p50 ${p(times, 0.5).toFixed(2)} ms, p99 ${p(times, 0.99).toFixed(2)} ms (${RUNS} runs)`,
  );
}

const now = new Date(END);
const minutes = planHistory({ interval: '1m', startTime: new Date(END - 1000 * 60_000).toISOString() }, now);
const year = planHistory({ interval: '1d', startTime: new Date(END - 365 * 86_400_000).toISOString() }, now);
await measure('history 1,000 minutes at 1m', async () => {
  const c = await readHistory(db, ID, minutes);
  if (c.length !== 1000) throw new Error(`1m: ${c.length} candles`);
});
await measure('history 365 days at 1d', async () => {
  const c = await readHistory(db, ID, year);
  if (c.length === 0) throw new Error('1d: no candles');
});
// Cursors signed with a key of this run: the bench reads its own pages only.
const cursors = cursorCodec(randomBytes(32));
await measure('trades, first page of 100', () =>
  readTrades(db, ID, { limit: 100 }, tradesPosition(ID, {}, cursors), 150, cursors),
);
/** @type {string | undefined} */
let cursor;
for (let i = 0; i < 500; i++) {
  const next = (
    await readTrades(db, ID, { limit: 100 }, tradesPosition(ID, { cursor }, cursors), 150, cursors)
  ).nextCursor;
  // A missing cursor would start again from the newest page and measure page 1 as page 501.
  if (!next) throw new Error(`trades: no page ${i + 2} of 100 (TRADES=${TRADES} is too few)`);
  cursor = next;
}
await measure('trades, page 501 of 100 by cursor (all outcomes)', () =>
  readTrades(
    db,
    ID,
    { limit: 100, cursor },
    tradesPosition(ID, { limit: 100, cursor }, cursors),
    150,
    cursors,
  ),
);
await db.close();
