// bench/history-compare.js on the embedded database: a market's history read by two builds side by
// side — this checkout ("after") and BENCH_BEFORE's dist ("before") — each through its own
// `readHistory`, on the PGlite data directory DATA_DIR that bench/market-scale.js loaded (EMBEDDED=1),
// read only. One process may hold a data directory, so the builds take turns opening it: rounds
// alternate them (before, after; then after, before; …), each round RUNS calls of each read,
// CONNECTIONS at a time (PGlite runs them one at a time). The answers of the two builds are compared
// each round. "CPU a call" is Node.js and PGlite together (one process).
//
//   npm run build && BENCH_BEFORE=/path/to/old-checkout DATA_DIR=/tmp/sibyl-scale-x node bench/history-compare-embedded.js
import { existsSync } from 'node:fs';
import os from 'node:os';
import { PgliteDatabase } from '../dist/db/pglite.js';
import * as afterHistory from '../dist/markets/series/history.js';
import { concurrentCalls, percentile } from './lib.js';

const BEFORE = process.env.BENCH_BEFORE;
if (!BEFORE || !existsSync(`${BEFORE}/dist/markets/series/history.js`))
  throw new Error('BENCH_BEFORE must name a directory holding a built dist/ of the older commit');
const DIR = process.env.DATA_DIR;
if (!DIR) throw new Error('DATA_DIR must name the data directory bench/market-scale.js loaded (EMBEDDED=1)');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const RUNS = Number(process.env.RUNS ?? 200);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 5);
const BIG = 'scale-big';
const END = Date.parse('2026-06-01T00:00:00Z');
const now = new Date(END);

const builds = [
  {
    name: 'before',
    history: await import(`${BEFORE}/dist/markets/series/history.js`),
    Database: (await import(`${BEFORE}/dist/db/pglite.js`)).PgliteDatabase,
  },
  { name: 'after', history: afterHistory, Database: PgliteDatabase },
];
const reads = {
  '1m, 1,000 minutes': { interval: '1m', startTime: new Date(END - 1000 * 60_000).toISOString() },
  '1d, a year': { interval: '1d', startTime: new Date(END - 365 * 86_400_000).toISOString() },
};
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');

console.log(
  `history of ${BIG} on ${DIR}: ${ROUNDS} rounds of ${RUNS} calls, ${CONNECTIONS} at a time; load ${load()}`,
);
/** @type {Record<string, { times: number[], cpu: number[] }>} */
const all = {};
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? builds : [...builds].reverse();
  /** @type {Record<string, string[]>} */
  const answers = {};
  for (const build of order) {
    const { db } = await build.Database.open(DIR);
    for (const [name, query] of Object.entries(reads)) {
      const plan = build.history.planHistory({ ...query, endTime: now.toISOString() }, now);
      const call = () => build.history.readHistory(db, BIG, plan);
      answers[name] ??= [];
      answers[name].push(JSON.stringify(await call()));
      const { times, cpuUs } = await concurrentCalls(call, { runs: RUNS, connections: CONNECTIONS });
      const key = `${name} ${build.name}`;
      all[key] ??= { times: [], cpu: [] };
      all[key].times.push(...times);
      all[key].cpu.push(cpuUs);
    }
    await db.close();
  }
  for (const [name, [a, b]] of Object.entries(answers))
    if (a !== b) throw new Error(`${name}: the two builds answer differently`);
}
console.log(`all rounds (load now ${load()}):`);
for (const [key, { times, cpu }] of Object.entries(all)) {
  const meanCpu = cpu.reduce((a, b) => a + b, 0) / cpu.length;
  console.log(
    `${key}: p50 ${percentile(times, 0.5).toFixed(1)} ms, p99 ${percentile(times, 0.99).toFixed(1)} ms (${times.length} calls), CPU ${(meanCpu / 1000).toFixed(2)} ms a call`,
  );
}
