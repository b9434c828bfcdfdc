// The plans of the market reads bench/market-scale.js times (docs/performance.md#market-data-embedded):
// each statement the routes' own functions (readList, readHistory) send for those reads, captured as
// sent and run again under EXPLAIN (ANALYZE, BUFFERS) with the same parameters; first the planner's
// statistics of the tables they read (rows counted against pg_class.reltuples, when last analyzed).
// On a database market-scale.js loaded (run it first, same MARKETS and DATA_DIR), read only:
//
//   npm run build && EMBEDDED=1 DATA_DIR=/tmp/sibyl-scale-x node bench/list-plans.js          # PGlite
//   npm run build && BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_scale node bench/list-plans.js
//
// ANALYZE_FIRST=1 runs ANALYZE before (it writes statistics: not on a database of someone else's).
import { randomBytes } from 'node:crypto';
import { sqlText } from '../dist/db/database.js';
import { PgliteDatabase } from '../dist/db/pglite.js';
import { PostgresDatabase } from '../dist/db/postgres.js';
import { cursorCodec } from '../dist/http/cursor.js';
import { readList } from '../dist/markets/search/list.js';
import { parseListQuery } from '../dist/markets/search/query.js';
import { planHistory, readHistory } from '../dist/markets/series/history.js';

const EMBEDDED = process.env.EMBEDDED === '1';
const url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/bench_scale';
if (EMBEDDED && !process.env.DATA_DIR)
  throw new Error('EMBEDDED=1 needs the DATA_DIR market-scale.js loaded');
const db = EMBEDDED
  ? (await PgliteDatabase.open(/** @type {string} */ (process.env.DATA_DIR))).db
  : new PostgresDatabase(url, { poolSize: 1 });
const END = Date.parse('2026-06-01T00:00:00Z');
const now = new Date(END);

if (process.env.ANALYZE_FIRST === '1') await db.exec('ANALYZE');
console.log(`${EMBEDDED ? 'PGlite' : 'PostgreSQL'}: ${(await db.query('SELECT version() AS v'))[0].v}`);
for (const table of [
  'markets',
  'market_outcomes',
  'market_trade_totals',
  'market_trades',
  'market_candles',
]) {
  const [s] = await db.query(
    `SELECT (SELECT count(*) FROM ${table})::bigint::text AS counted, c.reltuples::bigint::text AS estimated,
            COALESCE(s.last_analyze, s.last_autoanalyze)::text AS analyzed, s.n_mod_since_analyze::text AS modified
       FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
      WHERE c.relname = $1 AND c.relkind = 'r'`,
    [table],
  );
  console.log(
    `${table}: ${s.counted} rows, planner estimate ${s.estimated}, analyzed ${s.analyzed ?? 'never (per pg_stat)'}, ${s.modified} rows changed since`,
  );
}

/** The statements `fn` sends, as sent (text and parameters). */
async function captured(fn) {
  /** @type {{ text: string, params: readonly unknown[] }[]} */
  const sent = [];
  const spy = {
    query: (sql, params) => {
      sent.push({ text: sqlText(sql), params: params ?? [] });
      return db.query(sql, params);
    },
    exec: (script) => db.exec(script),
  };
  await fn(spy);
  return sent;
}

// Cursors signed with a key of this run: the bench reads its own pages only.
const cursors = cursorCodec(randomBytes(32));
const list = (query) => (spy) =>
  readList({ db: spy, now, cursors, solUsd: async () => 150 }, parseListQuery(query, cursors));
async function deepCursor(sort) {
  let cursor;
  for (let i = 0; i < 100; i++)
    cursor =
      (
        await readList(
          { db, now, cursors, solUsd: async () => 150 },
          parseListQuery({ sort, cursor }, cursors),
        )
      ).nextCursor ?? cursor;
  return cursor;
}
const year = planHistory(
  { interval: '1d', startTime: new Date(END - 365 * 86_400_000).toISOString(), endTime: now.toISOString() },
  now,
);
const reads = [
  ['search q=bitcoin', list({ q: 'bitcoin' })],
  ['search q="bitcoin above"', list({ q: 'bitcoin above' })],
  ['search q=sol', list({ q: 'sol' })],
  ['sort=volume, page 101 by cursor', list({ sort: 'volume', cursor: await deepCursor('volume') })],
  ['sort=createdAt, page 101 by cursor', list({ sort: 'createdAt', cursor: await deepCursor('createdAt') })],
  ['the spec list, page 3', list({ page: 3 })],
  ['history, a year at 1d', (spy) => readHistory(spy, 'scale-big', year)],
];
for (const [name, fn] of reads) {
  const sent = await captured(fn);
  for (const [i, s] of sent.entries()) {
    const plan = await db.query(`EXPLAIN (ANALYZE, BUFFERS) ${s.text}`, s.params);
    console.log(
      `\n### ${name}: statement ${i + 1} of ${sent.length}\n${s.text.replace(/\s+/g, ' ').slice(0, 300)}`,
    );
    for (const row of plan) console.log(Object.values(row)[0]);
  }
}
await db.close();
