// A list page's statistics (`pageStats`: each outcome's last price and probability, volume, 24-hour
// volume and liquidity of the page's markets) read by two builds side by side
// (docs/performance.md#kept-last-price): this checkout ("after") on BENCH_DATABASE_URL and another
// built checkout's dist ("before", BENCH_BEFORE, as bench/history-compare.js takes it) on
// BENCH_BEFORE_DATABASE_URL — two databases, since a build may need its own migrations — for the
// 50 markets of page 101 of `sort=volume` (the deep page of bench/market-scale.js), one caller,
// ROUNDS calls each, interleaved. Prints each build's median and 90th percentile, and whether the two
// builds' answers are equal.
//
//   npm run build && BENCH_BEFORE=/path/to/old-checkout \
//     BENCH_BEFORE_DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_scale \
//     BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_scale_new node bench/page-stats-compare.js
//
// Both databases hold bench/market-scale.js's data (a copy: `createdb -T bench_scale …`, then
// migrated by this build and vacuumed).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PostgresDatabase } from '../dist/db/postgres.js';
import { pageStats } from '../dist/markets/search/stats.js';

const BEFORE = process.env.BENCH_BEFORE;
if (!BEFORE) throw new Error('BENCH_BEFORE must name a directory holding a built dist/ of the older commit');
const ROUNDS = Number(process.env.ROUNDS ?? 200);
const before = await import(pathToFileURL(join(BEFORE, 'dist/markets/search/stats.js')).href);
const a = new PostgresDatabase(
  process.env.BENCH_BEFORE_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/bench_scale',
  {
    poolSize: 1,
  },
);
const b = new PostgresDatabase(
  process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/bench_scale',
  {
    poolSize: 1,
  },
);
const page = await a.query(
  `SELECT market_id AS id FROM market_trade_totals
    ORDER BY floor(notional / 10000) DESC, market_id DESC OFFSET 5000 LIMIT 50`,
);
const markets = page.map((r) => ({ id: String(r.id), outcomeCount: 2 }));
const now = new Date('2026-06-01T00:00:00Z');
/** @type {{ name: string, stats: typeof pageStats, db: PostgresDatabase, times: number[], answer: string }[]} */
const builds = [
  { name: 'before', stats: before.pageStats, db: a, times: [], answer: '' },
  { name: 'after', stats: pageStats, db: b, times: [], answer: '' },
];
for (let i = 0; i < ROUNDS; i++) {
  for (const build of i % 2 === 0 ? builds : [...builds].reverse()) {
    const started = performance.now();
    const answer = await build.stats(build.db, markets, now);
    build.times.push(performance.now() - started);
    if (i === 0) build.answer = JSON.stringify([...answer.entries()]);
  }
}
/** @param {number[]} times @param {number} q */
const at = (times, q) => [...times].sort((x, y) => x - y)[Math.floor(times.length * q)].toFixed(2);
for (const build of builds)
  console.log(
    `${build.name}: median ${at(build.times, 0.5)} ms, p90 ${at(build.times, 0.9)} ms (${ROUNDS} calls)`,
  );
console.log(`same answers: ${builds[0].answer === builds[1].answer}`);
await a.close();
await b.close();
