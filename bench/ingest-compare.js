// Trade ingestion of two builds side by side (docs/performance.md#trade-ingestion-before-and-after-the-candle-upkeep):
// this checkout ("after") and another checkout of the service ("before", BENCH_BEFORE, built with its
// own `npm ci`), each its own `sibyl serve` on its own fresh PostgreSQL database, fed the very same
// trade events through POST /api/v1/admin/markets/events in NDJSON bodies of BATCH lines, one request
// at a time. Rounds alternate the two builds (before, after; then after, before; …), so a machine
// whose speed drifts within minutes treats both alike, and each round's ratio is taken within it.
//
//   npm run build && BENCH_BEFORE=<another built checkout> BENCH_PORT_BASE=5200 node bench/ingest-compare.js
//
// The events: MARKETS binary markets (created first, unmeasured), then per round EVENTS trade events
// as a live feed delivers them: most are new trades a few milliseconds apart on markets of skewed
// popularity; OUT_OF_ORDER of them (a share) carry an `at` up to six hours older than the feed's
// clock (late trades: into an older bucket); DUPLICATES of them are the same event sent again with
// the same body (a redelivery of an earlier line of the round or of the previous round: skipped).
// CPU per event is read from /proc before and after each build's requests: the service process, and
// the PostgreSQL backends connected to that build's database (other databases' backends on a shared
// server are not counted; the WAL writer and checkpointer are not counted either).
// Autovacuum (docs/performance.md#trade-ingestion-with-autovacuum): a PostgreSQL server vacuums and
// analyzes by default, the benchmark's server may not
// (`SHOW autovacuum` off): then the rows ingestion updates (candles, totals) leave dead versions that
// nothing removes, a cost only the build keeping them pays. When the server's autovacuum is off, this
// script does its default's work itself for each build's database (BENCH_AUTOVACUUM=0 does not):
// while that build is ingesting, every BENCH_NAPTIME seconds of its ingestion (60, autovacuum_naptime's
// default) it VACUUMs each table past autovacuum's default thresholds (dead rows > 50 + 20% of live;
// rows inserted since the last vacuum > 1,000 + 20% of live) and ANALYZEs each table with more than
// 50 + 10% of live rows changed since its last analyze, on its own connection to that database,
// concurrently with the requests like an autovacuum worker: its CPU is counted as the build's
// PostgreSQL CPU, and a pass still running when the requests end is awaited outside the timed span.
// BENCH_CPU_PROF_DIR=/tmp/prof writes each service's V8 CPU profile when it stops; BENCH_KEEP=1
// keeps both databases; BENCH_DB_PREFIX names them (`<prefix>_<pid>_before`, default sibyl_ingest).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { PostgresDatabase } from '../dist/db/postgres.js';
import { median, processCpuSeconds, randomMint, startProcess, stopProcess, waitForHttp } from './lib.js';
import { ADMIN_TOKEN, generator, marketCreated } from './markets.js';

const AFTER = new URL('..', import.meta.url).pathname.replace(/\/$/, '');
const BEFORE = process.env.BENCH_BEFORE;
if (!BEFORE || !existsSync(`${BEFORE}/dist/cli/run.js`))
  throw new Error('BENCH_BEFORE must name a built checkout of the service (git worktree add …; npm ci)');
const DB_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PORT_BASE = Number(process.env.BENCH_PORT_BASE ?? 3901);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const EVENTS = Number(process.env.EVENTS ?? 40_000);
const MARKETS = Number(process.env.MARKETS ?? 200);
const BATCH = Number(process.env.BATCH ?? 5_000);
const OUT_OF_ORDER = Number(process.env.OUT_OF_ORDER ?? 0.1);
const DUPLICATES = Number(process.env.DUPLICATES ?? 0.05);
const NAPTIME = Number(process.env.BENCH_NAPTIME ?? 60);
const DB_PREFIX = process.env.BENCH_DB_PREFIX ?? 'sibyl_ingest';
const START = Date.parse('2026-11-01T00:00:00Z');

/**
 * @typedef {{ round: number, seconds: number, perSecond: number, serviceUs: number, postgresUs: number,
 *   applied: number, skipped: number, refused: number, load: number }} Run
 * @typedef {{ name: string, root: string, port: number, database: string, url: string, commit: string,
 *   runs: Run[], child?: import('./lib.js').BenchProcess, vacuum?: PostgresDatabase, untilVacuum: number,
 *   vacuums: string[] }} Build
 * @typedef {{ build: string, trades: number, totals: number, notional: string, candlesWrong?: number }} Facts
 */
const HOUR = 3_600_000;

const random = generator(36);
const wallets = Array.from({ length: 2_000 }, randomMint);
const marketId = (i) => `ingest-${String(i).padStart(4, '0')}`;
const prices = Array.from({ length: MARKETS }, () => 5_000);
let clock = START + 2 * HOUR; // the feed's clock: each new trade a few milliseconds after the last
let tradeNumber = 0;

/**
 * One round's lines, in the order a feed delivers them; `previous` is the last round's.
 * @param {string[]} previous
 */
function roundEvents(previous) {
  /** @type {string[]} */
  const events = [];
  while (events.length < EVENTS) {
    const r = random();
    if (r < DUPLICATES && (events.length > 0 || previous.length > 0)) {
      const from = previous.length > 0 && random() < 0.5 ? previous : events.length > 0 ? events : previous;
      events.push(from[Math.floor(random() * from.length)]);
      continue;
    }
    clock += 1 + Math.floor(random() * 20);
    const late = random() < OUT_OF_ORDER;
    const m = Math.floor(random() ** 2 * MARKETS); // a few markets hot, most quiet
    prices[m] = Math.min(9_900, Math.max(100, prices[m] + Math.floor(random() * 201) - 100));
    const n = ++tradeNumber;
    events.push(
      JSON.stringify({
        id: `ingest-t${n}`,
        type: 'trade',
        at: new Date(late ? clock - Math.floor(random() * 6 * HOUR) : clock).toISOString(),
        marketId: marketId(m),
        tradeId: `ingest-t${n}`,
        outcome: n % 2,
        price: prices[m],
        shares: String(1 + Math.floor(random() * 1e10)),
        buyer: wallets[Math.floor(random() * wallets.length)],
        seller: wallets[Math.floor(random() * wallets.length)],
      }),
    );
  }
  return events;
}

/** @param {string} url @param {string} name */
function withDatabase(url, name) {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * CPU seconds so far of each PostgreSQL backend connected to `database`, by pid.
 * @param {PostgresDatabase} admin
 * @param {string} database
 */
async function backendCpu(admin, database) {
  const rows = await admin.query('SELECT pid FROM pg_stat_activity WHERE datname = $1', [database]);
  /** @type {Map<number, number>} */
  const byPid = new Map();
  for (const { pid } of /** @type {{ pid: number }[]} */ (rows)) {
    const seconds = processCpuSeconds(pid);
    if (seconds !== null) byPid.set(pid, seconds);
  }
  return byPid;
}

/** @param {Map<number, number>} before @param {Map<number, number>} after */
function cpuSince(before, after) {
  let total = 0;
  for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? 0);
  return total;
}

/**
 * Posts `lines` in bodies of BATCH lines, one request at a time; the summed report.
 * @param {number} port
 * @param {string[]} lines
 */
async function post(port, lines) {
  const sum = { applied: 0, skipped: 0, refused: 0 };
  for (let i = 0; i < lines.length; i += BATCH) {
    const response = await fetch(`http://127.0.0.1:${port}/api/v1/admin/markets/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
      body: `${lines.slice(i, i + BATCH).join('\n')}\n`,
    });
    const report = /** @type {import('../dist/markets/ingest/ingest.js').IngestReport} */ (
      await response.json()
    );
    if (response.status !== 200 || report.refused > 0)
      throw new Error(`ingestion failed: ${response.status} ${JSON.stringify(report).slice(0, 500)}`);
    sum.applied += report.applied;
    sum.skipped += report.skipped;
    sum.refused += report.refused;
  }
  return sum;
}

const admin = new PostgresDatabase(DB_URL, { poolSize: 1 });
/** @param {Build} b */
function childOf(b) {
  if (!b.child) throw new Error(`${b.name} is not started`);
  return b.child;
}

/** @type {Build[]} */
const builds = [
  { name: 'before', root: BEFORE, port: PORT_BASE + 10 },
  { name: 'after', root: AFTER, port: PORT_BASE + 11 },
].map((b) => {
  const database = `${DB_PREFIX}_${process.pid}_${b.name}`;
  const commit = execFileSync('git', ['-C', b.root, 'rev-parse', '--short', 'HEAD'], {
    encoding: 'utf8',
  }).trim();
  return {
    ...b,
    database,
    url: withDatabase(DB_URL, database),
    commit,
    runs: /** @type {Run[]} */ ([]),
    untilVacuum: NAPTIME,
    vacuums: /** @type {string[]} */ ([]),
  };
});

/**
 * One pass of autovacuum's default rules over the build's tables (the header's Autovacuum).
 * @param {Build} b
 */
async function autovacuumPass(b) {
  const db = /** @type {PostgresDatabase} */ (b.vacuum);
  const rows = /** @type {{ name: string, vacuum: boolean, analyze: boolean }[]} */ (
    await db.query(
      `SELECT quote_ident(relname) AS name,
              (n_dead_tup > 50 + 0.2 * n_live_tup OR n_ins_since_vacuum > 1000 + 0.2 * n_live_tup) AS vacuum,
              n_mod_since_analyze > 50 + 0.1 * n_live_tup AS analyze
         FROM pg_stat_user_tables ORDER BY relname`,
    )
  );
  for (const r of rows) {
    if (!r.vacuum && !r.analyze) continue;
    const what = r.vacuum && r.analyze ? 'VACUUM (ANALYZE)' : r.vacuum ? 'VACUUM' : 'ANALYZE';
    await db.exec(`${what} ${r.name}`);
    b.vacuums.push(`${what} ${r.name}`);
  }
}

/**
 * Posts `lines` to the build, with autovacuum's work (when this script does it) alongside: the
 * seconds the requests took, their report, and the pass still running (await it before reading CPU).
 * @param {Build} b
 * @param {string[]} lines
 */
async function ingest(b, lines) {
  /** @type {Promise<void>} */
  let pass = Promise.resolve();
  let last = performance.now();
  const timer = b.vacuum
    ? setInterval(() => {
        const now = performance.now();
        b.untilVacuum -= (now - last) / 1000;
        last = now;
        if (b.untilVacuum <= 0) {
          b.untilVacuum += NAPTIME;
          pass = pass.then(() => autovacuumPass(b));
        }
      }, 100)
    : undefined;
  const started = performance.now();
  try {
    const report = await post(b.port, lines);
    return { report, seconds: (performance.now() - started) / 1000, pass };
  } finally {
    clearInterval(timer);
    if (b.vacuum) b.untilVacuum -= (performance.now() - last) / 1000;
  }
}

const [{ autovacuum }] = /** @type {{ autovacuum: string }[]} */ (await admin.query('SHOW autovacuum'));
const emulateAutovacuum = autovacuum !== 'on' && process.env.BENCH_AUTOVACUUM !== '0';
process.stderr.write(
  `server autovacuum = ${autovacuum}; ${emulateAutovacuum ? `this script vacuums as its default would (naptime ${NAPTIME} s)` : 'this script does not vacuum'}\n`,
);

try {
  for (const b of builds) {
    await admin.exec(`CREATE DATABASE "${b.database}"`);
    execFileSync(process.execPath, [`${b.root}/bin/sibyl.js`, 'migrate'], {
      env: { PATH: process.env.PATH, DATABASE_URL: b.url, LOG_LEVEL: 'warn' },
      stdio: 'ignore',
    });
    b.child = startProcess(`sibyl ${b.name} ${b.commit}`, [`${b.root}/bin/sibyl.js`, 'serve'], {
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      PORT: String(b.port),
      DATABASE_URL: b.url,
      ADMIN_TOKEN,
      RATE_LIMIT_PER_SECOND: '1000000000',
      RATE_LIMIT_BURST: '1000000000',
    });
  }
  for (const b of builds) await waitForHttp(`http://127.0.0.1:${b.port}/readyz`, childOf(b));
  if (emulateAutovacuum) for (const b of builds) b.vacuum = new PostgresDatabase(b.url, { poolSize: 1 });

  const markets = Array.from({ length: MARKETS }, (_, i) =>
    JSON.stringify(marketCreated(marketId(i), START - 24 * HOUR, 'crypto', false)),
  );
  for (const b of builds) await post(b.port, markets);

  // Warm-up (unmeasured): JIT, pools, prepared statements, the first pages of every table.
  let previous = [];
  const warm = roundEvents(previous);
  for (const b of builds) await (await ingest(b, warm)).pass;
  previous = warm;

  for (let round = 1; round <= ROUNDS; round++) {
    const lines = roundEvents(previous);
    previous = lines;
    const order = round % 2 === 1 ? builds : [...builds].reverse();
    for (const b of order) {
      const pg = await backendCpu(admin, b.database);
      const pid = Number(childOf(b).pid);
      const service = processCpuSeconds(pid) ?? Number.NaN;
      const { report, seconds, pass } = await ingest(b, lines);
      await pass;
      const serviceCpu = (processCpuSeconds(pid) ?? Number.NaN) - service;
      const pgCpu = cpuSince(pg, await backendCpu(admin, b.database));
      const run = {
        round,
        seconds,
        perSecond: lines.length / seconds,
        serviceUs: (serviceCpu * 1e6) / lines.length,
        postgresUs: (pgCpu * 1e6) / lines.length,
        ...report,
        load: os.loadavg()[0],
      };
      b.runs.push(run);
      process.stderr.write(
        `round ${round} ${b.name}: ${Math.round(run.perSecond)} events/s, CPU µs/event service ${run.serviceUs.toFixed(0)} · PostgreSQL ${run.postgresUs.toFixed(0)} (applied ${report.applied}, skipped ${report.skipped}; load ${run.load.toFixed(2)})\n`,
      );
    }
  }

  // Both builds must have recorded the same trades, and the candles must agree with them.
  /** @type {Facts[]} */
  const facts = [];
  for (const b of builds) {
    const db = new PostgresDatabase(b.url, { poolSize: 1 });
    const [row] = /** @type {Facts[]} */ (
      await db.query(
        `SELECT (SELECT count(*) FROM market_trades)::int AS trades,
              (SELECT sum(trades)::int FROM market_trade_totals) AS totals,
              (SELECT sum(notional)::text FROM market_trade_totals) AS notional`,
      )
    );
    if (b.name === 'after') {
      const [wrong] = /** @type {{ n: number }[]} */ (
        await db.query(
          `WITH ref AS (
           SELECT market_id, outcome_index, w.width,
                  date_bin(make_interval(secs => w.width), at, timestamptz '1970-01-01 00:00:00+00') AS bucket,
                  (array_agg(price ORDER BY at, trade_id))[1] AS open, max(price) AS high, min(price) AS low,
                  (array_agg(price ORDER BY at DESC, trade_id DESC))[1] AS close, sum(shares) AS volume,
                  count(*) AS trades
             FROM market_trades CROSS JOIN (VALUES (60), (3600), (86400)) AS w (width)
            GROUP BY 1, 2, 3, 4)
         SELECT count(*)::int AS n FROM ref FULL JOIN market_candles c USING (market_id, outcome_index, width, bucket)
          WHERE (ref.open, ref.high, ref.low, ref.close, ref.volume, ref.trades)
                IS DISTINCT FROM (c.open, c.high, c.low, c.close, c.volume, c.trades)`,
        )
      );
      row.candlesWrong = wrong.n;
    }
    await db.close();
    facts.push({ ...row, build: b.name });
  }
  process.stderr.write(`${JSON.stringify(facts)}\n`);
  for (const b of builds) process.stderr.write(`${b.name} vacuumed: ${b.vacuums.join(', ') || 'nothing'}\n`);
  const [before, after] = builds;
  if (facts[0].trades !== facts[1].trades || facts[0].notional !== facts[1].notional)
    throw new Error('the two builds recorded different trades');
  if (facts[1].candlesWrong !== 0)
    throw new Error(`${facts[1].candlesWrong} candles disagree with the trades`);

  const us = (v) => v.toFixed(0);
  const rows = before.runs.map((b, i) => {
    const a = after.runs[i];
    return `| ${b.round} | ${b.round % 2 === 1 ? 'before, after' : 'after, before'} | ${Math.round(b.perSecond).toLocaleString('en-US')} | ${Math.round(a.perSecond).toLocaleString('en-US')} | **${(a.perSecond / b.perSecond).toFixed(2)}** | ${us(b.serviceUs)} → ${us(a.serviceUs)} | ${us(b.postgresUs)} → ${us(a.postgresUs)} | ${b.load.toFixed(1)} / ${a.load.toFixed(1)} |`;
  });
  const ratios = before.runs.map((b, i) => after.runs[i].perSecond / b.perSecond);
  const med = (build, k) => median(build.runs.map((r) => r[k]));
  const version = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
  process.stdout.write(
    [
      `before = ${before.commit}, after = ${after.commit} (sibyl ${version}); ${MARKETS} markets, ${EVENTS.toLocaleString('en-US')} trade events a round (${OUT_OF_ORDER * 100}% late by up to 6 h, ${DUPLICATES * 100}% redelivered), ${BATCH.toLocaleString('en-US')} lines a request; ${ROUNDS} rounds; ${os.cpus().length} cores, Node.js ${process.version}.`,
      '',
      '| Round | order | before events/s | after events/s | after ÷ before | service CPU µs/event before → after | PostgreSQL CPU µs/event before → after | load (1 min) before / after |',
      '|---:|---|---:|---:|---:|---:|---:|---|',
      ...rows,
      '',
      `Median ratio ${median(ratios).toFixed(2)} (${ratios.map((r) => r.toFixed(2)).join(', ')}); median events/s ${Math.round(med(before, 'perSecond'))} → ${Math.round(med(after, 'perSecond'))}; median CPU µs/event service ${us(med(before, 'serviceUs'))} → ${us(med(after, 'serviceUs'))}, PostgreSQL ${us(med(before, 'postgresUs'))} → ${us(med(after, 'postgresUs'))}.`,
      emulateAutovacuum
        ? `Autovacuum (server's off; done by this script as its default would, naptime ${NAPTIME} s of each build's ingestion): before ${before.vacuums.length} commands (${before.vacuums.join(', ') || 'none'}), after ${after.vacuums.length} (${after.vacuums.join(', ') || 'none'}).`
        : `Autovacuum: the server's (${autovacuum}).`,
      `Checked: both builds recorded the same ${facts[0].trades.toLocaleString('en-US')} trades (same totals); the after build's ${'1m/1h/1d'} candles equal an aggregate of its trades (${facts[1].candlesWrong} differ).`,
      '',
    ].join('\n'),
  );
} finally {
  for (const b of builds) await b.vacuum?.close();
  for (const b of builds) if (b.child) await stopProcess(b.child);
  // BENCH_KEEP=1 keeps both databases (for bench/ingest-statements.js); drop them by hand after.
  for (const b of builds) {
    if (process.env.BENCH_KEEP === '1') process.stderr.write(`kept ${b.url}\n`);
    else await admin.exec(`DROP DATABASE IF EXISTS "${b.database}" WITH (FORCE)`);
  }
  await admin.close();
}
