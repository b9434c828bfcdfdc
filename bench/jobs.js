// `npm run bench:jobs`: how late scheduled jobs start. 1,000 price checks are scheduled through the
// API for the same second; worker processes run them; lateness = started_at − scheduled_for, read
// from the database, and beside it how late the last ones finished (finished_at − scheduled_for:
// jobs claimed together start together, so the start alone does not say when the work was done). On PostgreSQL with one and with two `sibyl work` processes, and on the embedded
// database (`sibyl start`, one process). Prints a Markdown table; figures go to docs/performance.md.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { migrate } from '../dist/db/migrate.js';
import { PgliteDatabase } from '../dist/db/pglite.js';
import { PostgresDatabase } from '../dist/db/postgres.js';
import {
  cpuSecondsSince,
  fundedAccount,
  processCpuSeconds,
  startProcess,
  stopProcess,
  waitForHttp,
} from './lib.js';

/** @typedef {import('./lib.js').Schemas} Schemas */

const BIN = new URL('../bin/sibyl.js', import.meta.url).pathname;
const DB_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const nFlag = process.argv.indexOf('--n');
const JOBS = Number(nFlag >= 0 ? process.argv[nFlag + 1] : (process.env.BENCH_JOBS ?? 1000));
// Scheduling through the API must end before the jobs are due: 15 s, or 4 ms a job for more.
const LEAD_MS = Number(process.env.BENCH_LEAD_MS ?? Math.max(15_000, JOBS * 4));
// Away from bench/run.js's and bench/ai.js's ports (BENCH_PORT_BASE .. +11): 3921 by default.
const PORT = Number(process.env.BENCH_PORT_BASE ?? 3901) + 20;
const ENV = {
  ...(process.env.JOB_CONCURRENCY ? { JOB_CONCURRENCY: process.env.JOB_CONCURRENCY } : {}),
  LOG_LEVEL: 'warn',
  HOST: '127.0.0.1',
  PORT: String(PORT),
  RATE_LIMIT_PER_SECOND: '1000000',
  RATE_LIMIT_BURST: '1000000',
};

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function fund(db) {
  return (await fundedAccount(db, { label: 'jobs', funds: 10_000_000_000n })).key;
}

/** Schedules JOBS price checks for one second through the API; returns the due time and the rate. */
async function schedule(key) {
  const due = new Date(Date.now() + LEAD_MS);
  due.setMilliseconds(0);
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < JOBS) {
      next++;
      const r = await fetch(`http://127.0.0.1:${PORT}/api/v1/price/scheduled`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ symbol: 'SOL', scheduledFor: due.toISOString() }),
      });
      if (r.status !== 200) throw new Error(`schedule answered ${r.status}: ${await r.text()}`);
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  const perSecond = JOBS / ((performance.now() - started) / 1000);
  if (Date.now() > due.getTime() - 1000) throw new Error('scheduling took too long for the lead time');
  return { due, perSecond };
}

async function lateness(db, due) {
  for (;;) {
    const [row] = await db.query(
      `SELECT count(*) FILTER (WHERE status = 'COMPLETED') AS done, count(*) AS total FROM scheduled_jobs WHERE scheduled_for = $1`,
      [due],
    );
    if (Number(row.total) >= JOBS && row.done === row.total) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const rows = await db.query(
    `SELECT extract(epoch FROM started_at - scheduled_for) * 1000 AS late,
            extract(epoch FROM finished_at - scheduled_for) * 1000 AS done
       FROM scheduled_jobs WHERE scheduled_for = $1`,
    [due],
  );
  return summary(
    rows.map((r) => Number(r.late)),
    rows.map((r) => Number(r.done)),
  );
}

/**
 * @param {number[]} starts
 * @param {number[]} finishes
 */
function summary(starts, finishes) {
  const late = [...starts].sort((a, b) => a - b);
  const done = [...finishes].sort((a, b) => a - b);
  return {
    p50: percentile(late, 50),
    p99: percentile(late, 99),
    max: late[late.length - 1],
    early: late.filter((l) => l < 0).length,
    finishedP99: percentile(done, 99),
  };
}

async function onPostgres(workers) {
  const name = `sibyl_bench_jobs_${process.pid}_${workers}`;
  const admin = new PostgresDatabase(DB_URL, { poolSize: 1 });
  await admin.exec(`CREATE DATABASE "${name}"`);
  const url = new URL(DB_URL);
  url.pathname = `/${name}`;
  const db = new PostgresDatabase(url.toString(), { poolSize: 2 });
  const children = [];
  try {
    await migrate(db);
    const key = await fund(db);
    const serve = startProcess('serve', [BIN, 'serve'], { ...ENV, DATABASE_URL: url.toString() });
    children.push(serve);
    for (let i = 0; i < workers; i++)
      children.push(startProcess(`work ${i}`, [BIN, 'work'], { ...ENV, DATABASE_URL: url.toString() }));
    await waitForHttp(`http://127.0.0.1:${PORT}/readyz`, serve);
    const { due, perSecond } = await schedule(key);
    const cpu = children.slice(1).map((c) => processCpuSeconds(c.pid));
    const result = await lateness(db, due);
    const used = children.slice(1).map((c, i) => cpuSecondsSince(c.pid, cpu[i]));
    const cpuPerJobUs = used.every((u) => u !== null) ? (used.reduce((a, b) => a + b, 0) * 1e6) / JOBS : null;
    return { ...result, perSecond, cpuPerJobUs };
  } finally {
    for (const child of children) await stopProcess(child);
    await db.close();
    await admin.exec(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.close();
  }
}

async function onPglite() {
  const dir = join(mkdtempSync(join(os.tmpdir(), 'sibyl-bench-jobs-')), 'data');
  try {
    const { db } = await PgliteDatabase.open(dir);
    await migrate(db);
    const key = await fund(db);
    await db.close();
    const start = startProcess('start', [BIN, 'start'], { ...ENV, SIBYL_DATA_DIR: dir });
    try {
      await waitForHttp(`http://127.0.0.1:${PORT}/readyz`, start);
      const { due, perSecond } = await schedule(key);
      // The embedded database belongs to the running process: read lateness through the API.
      await new Promise((r) => setTimeout(r, Math.max(0, due.getTime() - Date.now())));
      const late = [];
      const done = [];
      /** @param {string} path */
      const get = async (path) =>
        (
          await fetch(`http://127.0.0.1:${PORT}/api/v1/price/scheduled${path}`, {
            headers: { authorization: `Bearer ${key}` },
          })
        ).json();
      /** @param {string} query */
      const list = async (query) => /** @type {Schemas['ListPriceJobsResponse']} */ (await get(`?${query}`));
      for (;;) {
        const pending = await list('status=PENDING&pageSize=1');
        const processing = await list('status=PROCESSING&pageSize=1');
        if (pending.total === 0 && processing.total === 0) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      for (let p = 1; p <= Math.ceil(JOBS / 100); p++) {
        for (const job of (await list(`pageSize=100&page=${p}`)).jobs) {
          const one = /** @type {Schemas['GetPriceJobResponse']} */ (await get(`/${job.jobId}`));
          if (one.startedAt === null || one.finishedAt === null)
            throw new Error(`job ${job.jobId} is ${one.status}, never started or finished`);
          late.push(Date.parse(one.startedAt) - Date.parse(one.scheduledFor));
          done.push(Date.parse(one.finishedAt) - Date.parse(one.scheduledFor));
        }
      }
      return { ...summary(late, done), perSecond, cpuPerJobUs: null };
    } finally {
      await stopProcess(start);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** @type {[string, ReturnType<typeof summary> & { perSecond: number, cpuPerJobUs: number | null }][]} */
const rows = [
  ['PostgreSQL, 1 worker process', await onPostgres(1)],
  ['PostgreSQL, 2 worker processes', await onPostgres(2)],
  ['Embedded PGlite (`sibyl start`, one process)', await onPglite()],
];
const cpus = os.cpus();
const fmt = (v) => (v === null ? '—' : v.toFixed(0));
const table = [
  `${JOBS} price checks scheduled through the API for the same second, ${LEAD_MS / 1000} s ahead; lateness = started_at − scheduled_for; finished = finished_at − scheduled_for.`,
  `Run ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpus.length} cores, Node.js ${process.version}. Command: \`npm run bench:jobs\`.`,
  '',
  '| Setup | lateness p50 ms | p99 ms | max ms | started early | finished p99 ms | scheduled per second (API) | worker CPU µs/job |',
  '|---|---:|---:|---:|---:|---:|---:|---:|',
  ...rows.map(
    ([name, r]) =>
      `| ${name} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.max)} | ${r.early} | ${fmt(r.finishedP99)} | ${fmt(r.perSecond)} | ${fmt(r.cpuPerJobUs)} |`,
  ),
].join('\n');
process.stdout.write(`\n${table}\n`);
