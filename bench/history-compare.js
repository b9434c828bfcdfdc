// A market's history read by two builds side by side (docs/performance.md#history-one-statement):
// this checkout ("after") and another built checkout's dist ("before", BENCH_BEFORE: a directory
// holding a dist/ built from the older commit, inside a checkout whose node_modules it can resolve),
// each through its own `readHistory` and its own pool of CONNECTIONS connections, on the same
// database, read only: market-scale.js's big market (scale-big), a year at 1d and 1,000 minutes at 1m
// ending at its last trade. Rounds alternate the builds (before, after; then after, before; …), so a
// shared machine whose load drifts treats both alike; each round is RUNS calls, CONNECTIONS at a time.
//
//   npm run build && BENCH_BEFORE=/path/to/old-checkout BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_scale node bench/history-compare.js
//
// The database is the one bench/market-scale.js loads (run that first).
import { existsSync } from 'node:fs';
import os from 'node:os';
import { PostgresDatabase } from '../dist/db/postgres.js';
import * as afterHistory from '../dist/markets/series/history.js';
import { concurrentCalls, percentile } from './lib.js';

const BEFORE = process.env.BENCH_BEFORE;
if (!BEFORE || !existsSync(`${BEFORE}/dist/markets/series/history.js`))
  throw new Error('BENCH_BEFORE must name a directory holding a built dist/ of the older commit');
const url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/bench_scale';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const RUNS = Number(process.env.RUNS ?? 400);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 5);
const BIG = 'scale-big';
const END = Date.parse('2026-06-01T00:00:00Z');
const DAY = 86_400_000;

const beforeHistory = await import(`${BEFORE}/dist/markets/series/history.js`);
const { PostgresDatabase: BeforeDatabase } = await import(`${BEFORE}/dist/db/postgres.js`);
const builds = [
  { name: 'before', history: beforeHistory, db: new BeforeDatabase(url, { poolSize: CONNECTIONS }) },
  { name: 'after', history: afterHistory, db: new PostgresDatabase(url, { poolSize: CONNECTIONS }) },
];
const now = new Date(END);
const reads = {
  '1d, a year': { interval: '1d', startTime: new Date(END - 365 * DAY).toISOString() },
  '1m, 1,000 minutes': { interval: '1m', startTime: new Date(END - 1000 * 60_000).toISOString() },
};

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');
const p = percentile;

/** RUNS calls, CONNECTIONS at a time: every call's time and the Node.js CPU a call. */
async function measure(build, query) {
  const plan = build.history.planHistory({ ...query, endTime: now.toISOString() }, now);
  const call = () => build.history.readHistory(build.db, BIG, plan);
  const expected = JSON.stringify(await call());
  const { times, cpuUs } = await concurrentCalls(call, { runs: RUNS, connections: CONNECTIONS });
  return { times, cpuUs, answer: expected };
}

console.log(`history of ${BIG}: ${ROUNDS} rounds of ${RUNS} calls, ${CONNECTIONS} at a time; load ${load()}`);
const all = {};
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? builds : [...builds].reverse();
  for (const [name, query] of Object.entries(reads)) {
    const answers = [];
    for (const build of order) {
      const r = await measure(build, query);
      answers.push(r.answer);
      const key = `${name} ${build.name}`;
      all[key] ??= { times: [], cpu: [] };
      all[key].times.push(...r.times);
      all[key].cpu.push(r.cpuUs);
      console.log(
        `round ${round + 1} ${key}: p50 ${p(r.times, 0.5).toFixed(2)} ms, p99 ${p(r.times, 0.99).toFixed(2)} ms, Node.js CPU ${r.cpuUs.toFixed(0)} µs a call`,
      );
    }
    if (answers[0] !== answers[1]) throw new Error(`${name}: the two builds answer differently`);
  }
}
console.log(`all rounds (load now ${load()}):`);
for (const [key, { times, cpu }] of Object.entries(all)) {
  const meanCpu = cpu.reduce((a, b) => a + b, 0) / cpu.length;
  console.log(
    `${key}: p50 ${p(times, 0.5).toFixed(2)} ms, p99 ${p(times, 0.99).toFixed(2)} ms (${times.length} calls), Node.js CPU ${meanCpu.toFixed(0)} µs a call`,
  );
}
for (const b of builds) await b.db.close();
