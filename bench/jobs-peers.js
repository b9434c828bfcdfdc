// `node bench/jobs-peers.js [--n 1000,10000,100000] [--systems sibyl,graphile-worker,pg-boss]`
// (after `npm run build`): the same N jobs due at the same instant, run by two worker processes of
// Sibyl, of graphile-worker and of pg-boss, each on a fresh database of the same PostgreSQL. Sibyl's
// jobs are price checks scheduled through its API; the peers' jobs a task that does one trivial
// database write (an INSERT of the job's number and times). Each system's jobs are first added far
// ahead (Sibyl's through the API), then all moved to one instant a few seconds away, as a second
// of jobs due together would be: adding them is not what is measured. Lateness = when the work
// started − the time it was due (Sibyl: started_at; the peers: the task's first line); finished =
// when it was done (Sibyl: finished_at; the peers: the commit of the task's write). Prints one
// Markdown table. Peers' settings: see PEERS below (docs/jobs.md#comparison).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { migrate } from '../dist/db/migrate.js';
import { PostgresDatabase } from '../dist/db/postgres.js';
import { fundedAccount, startProcess, stopProcess, waitForHttp } from './lib.js';

const SELF = new URL(import.meta.url).pathname;
const BIN = new URL('../bin/sibyl.js', import.meta.url).pathname;
const DB_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PORT = Number(process.env.BENCH_PORT_BASE ?? 3901) + 22;
const WORKERS = 2;
/** The peers as a user tuning them for punctual jobs would set them up (their defaults in comments). */
const PEERS = {
  'graphile-worker': { concurrency: 100, pollIntervalMs: 100, localQueueSize: 500 }, // 1, 2000 ms, none
  'pg-boss': { pollers: 4, batchSize: 100, pollingIntervalSeconds: 0.5 }, // 1, 1, 2 s
};

function flag(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 && process.argv[at + 1] ? process.argv[at + 1] : fallback;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** A fresh database for one run; `use` gets its URL; dropped after. */
async function withDatabase(label, use) {
  const name = `sibyl_bench_peers_${process.pid}_${label.replace(/\W/g, '_')}`;
  const admin = new PostgresDatabase(DB_URL, { poolSize: 1 });
  await admin.exec(`CREATE DATABASE "${name}"`);
  const url = new URL(DB_URL);
  url.pathname = `/${name}`;
  try {
    return await use(url.toString());
  } finally {
    await admin.exec(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.close();
  }
}

/** A process's peak resident memory (MB) and CPU time used so far (ms), from /proc (Linux). */
function usage(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const hwm = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    const ticks = Number(stat[11]) + Number(stat[12]); // utime + stime (fields 14, 15)
    return { rssPeakMb: hwm, cpuMs: (ticks * 1000) / 100 };
  } catch {
    return { rssPeakMb: 0, cpuMs: 0 };
  }
}

/**
 * The instant N jobs are moved to: whole seconds, 5 s and 0.1 ms a job away. Moving 100,000 rows is
 * itself an UPDATE of seconds on a loaded machine; with a fixed 5 s it committed after the instant,
 * and what was measured was that UPDATE, not the queue.
 */
const instant = (n) => new Date(Math.ceil((Date.now() + 5000 + n / 10) / 1000) * 1000);

/** Waits until `done()` reaches n, then reads the lateness rows. */
async function collect(db, n, doneSql, rowsSql) {
  const deadline = Date.now() + 30 * 60_000;
  for (;;) {
    const [row] = await db.query(doneSql);
    if (Number(row.n) >= n) break;
    if (Date.now() > deadline) throw new Error(`only ${row.n} of ${n} done`);
    await sleep(200);
  }
  const rows = await db.query(rowsSql);
  const late = rows.map((r) => Number(r.late)).sort((a, b) => a - b);
  const done = rows.map((r) => Number(r.done)).sort((a, b) => a - b);
  return {
    n: rows.length,
    p50: percentile(late, 50),
    p99: percentile(late, 99),
    early: late.filter((l) => l < 0).length,
    finishedP99: percentile(done, 99),
  };
}

async function sibyl(n) {
  return withDatabase(`sibyl_${n}`, async (url) => {
    const db = new PostgresDatabase(url, { poolSize: 2 });
    const env = {
      LOG_LEVEL: process.env.BENCH_WORKER_LOG ?? 'warn',
      HOST: '127.0.0.1',
      PORT: String(PORT),
      DATABASE_URL: url,
      RATE_LIMIT_PER_SECOND: '1000000',
      RATE_LIMIT_BURST: '1000000',
      // The workers' settings, when given (JOB_PRICE_HELD=5000 …): to compare them in one run.
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('JOB_'))),
    };
    const children = [];
    try {
      await migrate(db);
      const { key } = await fundedAccount(db, { label: 'peers', funds: 100_000_000_000n });
      const serve = startProcess('serve', [BIN, 'serve'], env);
      children.push(serve);
      for (let i = 0; i < WORKERS; i++) children.push(startProcess(`work ${i}`, [BIN, 'work'], env));
      await waitForHttp(`http://127.0.0.1:${PORT}/readyz`, serve);
      const far = new Date(Date.now() + 3_600_000).toISOString();
      let next = 0;
      const client = async () => {
        while (next < n) {
          next++;
          const r = await fetch(`http://127.0.0.1:${PORT}/api/v1/price/scheduled`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ symbol: 'SOL', scheduledFor: far }),
          });
          if (r.status !== 200) throw new Error(`schedule answered ${r.status}: ${await r.text()}`);
        }
      };
      await Promise.all(Array.from({ length: 32 }, client));
      const due = instant(n);
      await db.query(`UPDATE scheduled_jobs SET scheduled_for = $1`, [due]);
      await db.query(`SELECT pg_notify('scheduled_jobs', '')`);
      process.stderr.write(`sibyl ${n}: moved to the instant ${due.getTime() - Date.now()} ms before it\n`);
      // How many the workers hold claimed ahead just before the instant (docs/jobs.md#claims).
      await sleep(due.getTime() - 300 - Date.now());
      const [ahead] = await db.query(
        `SELECT count(*) AS n FROM scheduled_jobs WHERE status = 'PROCESSING' AND started_at IS NULL`,
      );
      process.stderr.write(`sibyl ${n}: ${ahead.n} claimed ahead 300 ms before the instant\n`);
      const workers = children.slice(1);
      const before = workers.map((child) => usage(child.pid).cpuMs);
      const backends = async () =>
        (await db.query('SELECT pid FROM pg_stat_activity WHERE datname = current_database()')).map((r) =>
          Number(r.pid),
        );
      const pgBefore = new Map((await backends()).map((pid) => [pid, usage(pid).cpuMs]));
      const result = await collect(
        db,
        n,
        `SELECT count(*) AS n FROM scheduled_jobs WHERE status = 'COMPLETED'`,
        `SELECT extract(epoch FROM started_at - scheduled_for) * 1000 AS late,
                extract(epoch FROM finished_at - scheduled_for) * 1000 AS done FROM scheduled_jobs`,
      );
      // The workers' memory at its peak, and their CPU from 300 ms before the instant until done.
      const after = workers.map((child) => usage(child.pid));
      const cpuMs = after.reduce((sum, u, i) => sum + u.cpuMs - (before[i] ?? 0), 0);
      // PostgreSQL's: its backends serving this database (same machine), over the same span.
      let pgMs = 0;
      for (const pid of await backends()) pgMs += usage(pid).cpuMs - (pgBefore.get(pid) ?? 0);
      const perJob = (ms) => ((ms * 1000) / n).toFixed(0);
      process.stderr.write(
        `sibyl ${n}: workers' RSS peak ${after.map((u) => u.rssPeakMb.toFixed(0)).join(' / ')} MB; CPU ` +
          `${cpuMs.toFixed(0)} ms workers, ${pgMs.toFixed(0)} ms PostgreSQL (${perJob(cpuMs)} · ${perJob(pgMs)} µs a job)\n`,
      );
      return result;
    } finally {
      for (const child of children) await stopProcess(child);
      // BENCH_WORKER_LOG=info (or warn): the workers' own logs, for what held them up.
      if (process.env.BENCH_WORKER_LOG) {
        for (const child of children.slice(1)) process.stderr.write(`--- ${child.name}\n${child.output()}`);
      }
      await db.close();
    }
  });
}

const WRITES = `CREATE TABLE bench_writes (
  i integer PRIMARY KEY, due timestamptz NOT NULL, started timestamptz NOT NULL,
  finished timestamptz NOT NULL DEFAULT clock_timestamp())`;
const WRITES_DONE = 'SELECT count(*) AS n FROM bench_writes';
const WRITES_ROWS = `SELECT extract(epoch FROM started - due) * 1000 AS late,
  extract(epoch FROM finished - due) * 1000 AS done FROM bench_writes`;
const WRITE = 'INSERT INTO bench_writes (i, due, started) VALUES ($1, $2, $3)';

/** Starts this script as one peer worker process; resolves once it says it is ready. */
function peerWorker(system, url) {
  const child = spawn(process.execPath, [SELF, '--worker', system, '--url', url], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const ready = new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      if (String(chunk).includes('ready')) resolve(undefined);
    });
    child.once('exit', (code) => reject(new Error(`${system} worker exited ${code}`)));
  });
  return { child, ready };
}

async function stopPeers(children) {
  for (const { child } of children) {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await Promise.race([new Promise((r) => child.once('exit', r)), sleep(5000)]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }
}

async function graphile(n) {
  return withDatabase(`graphile_${n}`, async (url) => {
    const { runMigrations } = await import('graphile-worker');
    await runMigrations({ connectionString: url });
    const db = new PostgresDatabase(url, { poolSize: 2 });
    const children = [];
    try {
      await db.exec(WRITES);
      for (let i = 0; i < WORKERS; i++) children.push(peerWorker('graphile-worker', url));
      await Promise.all(children.map((c) => c.ready));
      const far = new Date(Date.now() + 3_600_000);
      for (let from = 0; from < n; from += 10_000) {
        // add_jobs (one call for 10,000): add_job over generate_series took over a minute per 10,000
        // once 50,000 were in.
        await db.query(
          `SELECT graphile_worker.add_jobs(ARRAY(
             SELECT ('write', json_build_object('i', g), NULL, $1, NULL, NULL, NULL, NULL)::graphile_worker.job_spec
               FROM generate_series($2::int, $3::int) g))`,
          [far, from + 1, Math.min(n, from + 10_000)],
        );
      }
      const due = instant(n);
      await db.query('UPDATE graphile_worker._private_jobs SET run_at = $1', [due]);
      return await collect(db, n, WRITES_DONE, WRITES_ROWS);
    } finally {
      await stopPeers(children);
      await db.close();
    }
  });
}

async function pgBoss(n) {
  return withDatabase(`pgboss_${n}`, async (url) => {
    const { default: PgBoss } = await import('pg-boss');
    const boss = new PgBoss({ connectionString: url, max: 2 });
    boss.on('error', (err) => process.stderr.write(`pg-boss: ${err}\n`));
    await boss.start();
    await boss.createQueue('write');
    const db = new PostgresDatabase(url, { poolSize: 2 });
    const children = [];
    try {
      await db.exec(WRITES);
      for (let i = 0; i < WORKERS; i++) children.push(peerWorker('pg-boss', url));
      await Promise.all(children.map((c) => c.ready));
      const far = new Date(Date.now() + 3_600_000);
      for (let from = 0; from < n; from += 1000) {
        const jobs = [];
        for (let i = from + 1; i <= Math.min(n, from + 1000); i++)
          jobs.push({ name: 'write', data: { i }, startAfter: far });
        await boss.insert(jobs);
      }
      const due = instant(n);
      await db.query(`UPDATE pgboss.job SET start_after = $1 WHERE name = 'write'`, [due]);
      return await collect(db, n, WRITES_DONE, WRITES_ROWS);
    } finally {
      await stopPeers(children);
      await boss.stop({ graceful: false, wait: false }).catch(() => {});
      await db.close();
    }
  });
}

/** One peer worker process (`--worker SYSTEM --url URL`): runs the write task until SIGTERM. */
async function runWorker(system, url) {
  const { default: pg } = await import('pg');
  if (system === 'graphile-worker') {
    const { run } = await import('graphile-worker');
    const settings = PEERS['graphile-worker'];
    const runner = await run({
      connectionString: url,
      concurrency: settings.concurrency,
      pollInterval: settings.pollIntervalMs,
      noHandleSignals: true,
      preset: { worker: { localQueue: { size: settings.localQueueSize } } },
      taskList: {
        async write(payload, helpers) {
          const started = new Date();
          const { i } = /** @type {{ i: number }} */ (payload);
          await helpers.query(WRITE, [i, helpers.job.run_at, started]);
        },
      },
    });
    process.stdout.write('ready\n');
    process.once('SIGTERM', () => void runner.stop().then(() => process.exit(0)));
    await runner.promise;
    return;
  }
  const { default: PgBoss } = await import('pg-boss');
  const settings = PEERS['pg-boss'];
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const boss = new PgBoss({ connectionString: url, max: 4, supervise: false, schedule: false });
  boss.on('error', (err) => process.stderr.write(`pg-boss: ${err}\n`));
  await boss.start();
  for (let i = 0; i < settings.pollers; i++) {
    await boss.work(
      'write',
      {
        batchSize: settings.batchSize,
        pollingIntervalSeconds: settings.pollingIntervalSeconds,
        includeMetadata: true,
      },
      async (jobs) => {
        const started = new Date();
        await Promise.all(
          jobs.map((job) =>
            pool.query(WRITE, [
              /** @type {{ i: number }} */ (job.data).i,
              /** @type {any} */ (job).startAfter,
              started,
            ]),
          ),
        );
      },
    );
  }
  process.stdout.write('ready\n');
  process.once('SIGTERM', () => void boss.stop({ graceful: false, wait: false }).then(() => process.exit(0)));
}

const worker = flag('worker', '');
if (worker) {
  await runWorker(worker, flag('url', ''));
} else {
  const sizes = flag('n', '1000,10000').split(',').map(Number);
  const systems = flag('systems', 'sibyl,graphile-worker,pg-boss').split(',');
  const runs = { sibyl, 'graphile-worker': graphile, 'pg-boss': pgBoss };
  const rows = [];
  for (const n of sizes) {
    for (const system of systems) {
      const load = os.loadavg()[0].toFixed(1);
      const r = await runs[/** @type {keyof typeof runs} */ (system)](n);
      rows.push({ n, system, load, ...r });
      process.stderr.write(`${system} ${n}: ${JSON.stringify(r)} (load ${load})\n`);
    }
  }
  const fmt = (v) => v.toFixed(0);
  const table = [
    `Jobs due at one instant, ${WORKERS} worker processes each, one PostgreSQL; lateness = start − due; finished = done − due (ms).`,
    `Run ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${os.cpus().length} cores, Node.js ${process.version}. Command: \`node bench/jobs-peers.js --n ${sizes.join(',')}\`.`,
    `Peers: graphile-worker ${JSON.stringify(PEERS['graphile-worker'])}, pg-boss ${JSON.stringify(PEERS['pg-boss'])}.`,
    '',
    '| N | System | lateness p50 | p99 | started early | finished p99 | load (1 min) at start |',
    '|---:|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.n} | ${r.system} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${r.early} | ${fmt(r.finishedP99)} | ${r.load} |`,
    ),
  ].join('\n');
  process.stdout.write(`\n${table}\n`);
}
