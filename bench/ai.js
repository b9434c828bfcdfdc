// AI resolution scenarios of `npm run bench` (BENCH_SCENARIOS=ai-wall,ai-load,ai-tools): the real
// service (`sibyl start`: API and worker in one process) on PostgreSQL, its four model slots pointed
// at fake providers in a child process (bench/fake-llm.js) that answer after fixed delays. In
// ai-tools each fake model first calls Sibyl's `sibyl_price` and answers from its result: two calls
// a model, the tool answered from the database in between.
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { migrate } from '../dist/db/migrate.js';
import { PostgresDatabase } from '../dist/db/postgres.js';
import { reconcileLedger } from '../dist/ledger/ledger.js';
import {
  cpuSecondsSince,
  fundedAccount,
  median,
  postgresCpuSeconds,
  postgresCpuSince,
  processCpuSeconds,
  startProcess,
  stopProcess,
  waitForHttp,
} from './lib.js';

/** @typedef {import('./lib.js').Schemas} Schemas */

export const AI_SCENARIOS = ['ai-wall', 'ai-load', 'ai-tools'];

const BIN = new URL('../bin/sibyl.js', import.meta.url).pathname;
const WALL_DELAYS = [200, 400, 800, 1600];
const WALL_RUNS = Number(process.env.BENCH_AI_WALL_RUNS ?? 5);
const LOAD_COUNT = Number(process.env.BENCH_AI_LOAD_COUNT ?? 500);
const LOAD_DELAY = 500;
const PROBE_INTERVAL_MS = 10; // one price request every 10 ms during the load run
// Beside bench/run.js's ports (BENCH_PORT_BASE .. +4), so that two benchmarks on one machine never
// answer each other: 3911 and 3912 by default.
const PORT_BASE = Number(process.env.BENCH_PORT_BASE ?? 3901);
const WALL_PORT = PORT_BASE + 10;
const LOAD_PORT = PORT_BASE + 11;

function withDatabase(url, name) {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

const fundedKey = (db, mode) => fundedAccount(db, { mode, label: 'ai', funds: 1_000_000n * 1_000_000n });

async function startFakes(delays, tools = false) {
  const child = startProcess('fake LLM providers', [new URL('fake-llm.js', import.meta.url).pathname], {
    FAKE_LLM_DELAYS: delays.join(','),
    FAKE_LLM_TOOLS: tools ? '1' : '0',
  });
  const deadline = Date.now() + 10_000;
  for (;;) {
    const line = child.output().split('\n')[0];
    if (line?.startsWith('[')) return { child, ports: JSON.parse(line) };
    if (Date.now() > deadline || child.exitCode !== null)
      throw new Error(`fakes did not start: ${child.output()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function startService(name, port, dbUrl, fakePorts) {
  const env = {
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: dbUrl,
    RATE_LIMIT_PER_SECOND: '1000000000',
    RATE_LIMIT_BURST: '1000000000',
    ...(process.env.BENCH_AI_CONCURRENCY ? { AI_WORKER_CONCURRENCY: process.env.BENCH_AI_CONCURRENCY } : {}),
  };
  fakePorts.forEach((p, i) => {
    const n = i + 1;
    Object.assign(env, {
      [`AI_MODEL_${n}_PROVIDER`]: 'openai-compatible',
      [`AI_MODEL_${n}_NAME`]: `bench${n}`,
      [`AI_MODEL_${n}_ID`]: 'fake',
      [`AI_MODEL_${n}_BASE_URL`]: `http://127.0.0.1:${p}/v1`,
    });
  });
  // e.g. BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the service.
  const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child = startProcess(name, [...nodeArgs, BIN, 'start'], env);
  await waitForHttp(`http://127.0.0.1:${port}/readyz`, child);
  return child;
}

/**
 * @param {number} port
 * @param {string} key
 */
function submit(port, key) {
  return fetch(`http://127.0.0.1:${port}/api/v1/ai/resolve`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      question: 'Did the benchmark finish?',
      outcomes: ['Yes', 'No'],
      callbackUrl: 'https://hooks.example.com/bench',
    }),
  }).then(async (r) => ({
    status: r.status,
    body: /** @type {Schemas['ResolveWithAiResponse']} */ (await r.json()),
  }));
}

async function pollUntilDone(port, key, requestId) {
  for (;;) {
    const r = await fetch(`http://127.0.0.1:${port}/api/v1/ai/request/${requestId}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const body = /** @type {Schemas['AiRequestRecord']} */ (await r.json());
    if (body.status === 'COMPLETED' || body.status === 'FAILED') return body;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Whether every vote of a record holds the `sibyl_price` call its fake model made. */
const calledTool = (record) =>
  record.votes.every((vote) => vote.evidence.some((e) => e.kind === 'sibyl' && e.tool === 'sibyl_price'));

/**
 * One resolution at a time, from submit to COMPLETED seen by polling every 5 ms. With `tools`,
 * each model makes two calls (the tool call, then the answer): the floor is twice the slowest.
 */
async function wallScenario(db, dbUrl, account, failures, tools = false) {
  const id = tools ? 'ai-tools' : 'ai-wall';
  const fakes = await startFakes(WALL_DELAYS, tools);
  const service = await startService(`sibyl start (${id})`, WALL_PORT, dbUrl, fakes.ports);
  try {
    for (let i = 0; i < 2; i++) {
      const warm = await submit(WALL_PORT, account.key);
      await pollUntilDone(WALL_PORT, account.key, warm.body.requestId);
    }
    const walls = [];
    const server = [];
    for (let i = 0; i < WALL_RUNS; i++) {
      const started = performance.now();
      const { body } = await submit(WALL_PORT, account.key);
      const record = await pollUntilDone(WALL_PORT, account.key, body.requestId);
      walls.push(performance.now() - started);
      if (record.status !== 'COMPLETED') failures.push(`${id}: ${body.requestId} ended ${record.status}`);
      if (tools && !calledTool(record)) failures.push(`${id}: a vote of ${body.requestId} made no tool call`);
      const [row] = await db.query(
        'SELECT extract(epoch FROM completed_at - created_at) * 1000 AS ms FROM ai_requests WHERE id = $1',
        [body.requestId],
      );
      server.push(Number(row.ms));
    }
    const slowest = Math.max(...WALL_DELAYS) * (tools ? 2 : 1);
    return { walls, server, slowest, ratio: median(walls) / slowest };
  } finally {
    await stopProcess(service);
    await stopProcess(fakes.child);
  }
}

/**
 * Callback delivery attempts made so far. The bench's callback host does not resolve, so each
 * callback is retried 5 s after its first attempt: a run that lasts longer makes more attempts
 * within its CPU window (the service's CPU counts them), whatever its resolutions cost.
 */
async function callbackAttempts(db) {
  const [row] = await db.query('SELECT coalesce(sum(attempts), 0) AS n FROM webhook_deliveries');
  return Number(row.n);
}

function percentile(values, p) {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}

/**
 * LOAD_COUNT resolutions submitted at once; price requests paced every 10 ms meanwhile, unless
 * `probe` is false. With `tools`, each model calls `sibyl_price` first (each of its two calls after
 * LOAD_DELAY). The service's CPU counts the probes it answers: a run that lasts longer answers more,
 * so the CPU of resolutions with and without tools is compared without probes.
 */
async function loadScenario(
  db,
  dbUrl,
  account,
  prober,
  failures,
  { tools = false, probe: probed = true } = {},
) {
  const id = `${tools ? 'ai-tools' : 'ai-load'}${probed ? '' : ' (no probes)'}`;
  const fakes = await startFakes([LOAD_DELAY, LOAD_DELAY, LOAD_DELAY, LOAD_DELAY], tools);
  const service = await startService(`sibyl start (${id})`, LOAD_PORT, dbUrl, fakes.ports);
  try {
    const warm = await Promise.all(Array.from({ length: 20 }, () => submit(LOAD_PORT, account.key)));
    for (const w of warm) await pollUntilDone(LOAD_PORT, account.key, w.body.requestId);

    const latencies = [];
    let probing = true;
    const probes = [];
    const probe = async () => {
      const t = performance.now();
      const r = await fetch(`http://127.0.0.1:${LOAD_PORT}/api/v1/price/SOL`, {
        headers: { authorization: `Bearer ${prober.key}` },
      });
      await r.arrayBuffer();
      if (r.status === 200) latencies.push(performance.now() - t);
      else failures.push(`${id}: a price probe answered ${r.status}`);
    };
    const timer = setInterval(() => {
      if (probing && probed) probes.push(probe());
    }, PROBE_INTERVAL_MS);

    const attemptsBefore = await callbackAttempts(db);
    const cpu = { service: processCpuSeconds(service.pid), postgres: postgresCpuSeconds() };
    const started = performance.now();
    const submitted = await Promise.all(
      Array.from({ length: LOAD_COUNT }, () => submit(LOAD_PORT, account.key)),
    );
    const accepted = performance.now() - started;
    const ids = submitted.map((s) => s.body.requestId);
    if (submitted.some((s) => s.status !== 200)) failures.push(`${id}: a submit was refused`);
    for (;;) {
      const [row] = await db.query(
        `SELECT count(*) FILTER (WHERE status = 'COMPLETED') AS done,
                (SELECT count(*) FROM webhook_deliveries WHERE request_id = ANY($1)) AS callbacks
           FROM ai_requests WHERE id = ANY($1)`,
        [ids],
      );
      if (Number(row.done) === LOAD_COUNT && Number(row.callbacks) === LOAD_COUNT) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const elapsed = performance.now() - started;
    const serviceCpu = cpuSecondsSince(service.pid, cpu.service);
    const postgresCpu = postgresCpuSince(cpu.postgres, postgresCpuSeconds());
    const attempts = (await callbackAttempts(db)) - attemptsBefore;
    const perResolutionMs = (/** @type {number | null} */ seconds) =>
      seconds === null ? null : (seconds * 1000) / LOAD_COUNT;
    probing = false;
    clearInterval(timer);
    await Promise.all(probes);
    if (tools && !calledTool(await pollUntilDone(LOAD_PORT, account.key, ids[ids.length - 1]))) {
      failures.push(`${id}: a vote made no tool call`);
    }
    return {
      accepted,
      elapsed,
      cpuService: perResolutionMs(serviceCpu),
      cpuPostgres: perResolutionMs(postgresCpu),
      attempts,
      probes: latencies.length,
      p50: percentile(latencies, 50) ?? Number.NaN,
      p99: percentile(latencies, 99) ?? Number.NaN,
      max: Math.max(...latencies),
    };
  } finally {
    await stopProcess(service);
    await stopProcess(fakes.child);
  }
}

export async function runAiBench({ dbUrl, only, writeDocs }) {
  const wanted = (id) => !only || only.includes(id);
  const admin = new PostgresDatabase(dbUrl, { poolSize: 1 });
  const name = `sibyl_bench_ai_${process.pid}`;
  await admin.exec(`CREATE DATABASE "${name}"`);
  const url = withDatabase(dbUrl, name);
  const db = new PostgresDatabase(url, { poolSize: 2 });
  const failures = [];
  const lines = [];
  try {
    await migrate(db);
    const live = await fundedKey(db, 'live');
    const prober = await fundedKey(db, 'sandbox');
    const [pg] = await db.query('SHOW server_version');
    const cpus = os.cpus();
    lines.push(
      `Run ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpus.length} cores (${cpus[0]?.model.trim()}), ` +
        `Node.js ${process.version}, PostgreSQL ${pg.server_version}. \`sibyl start\` (API and worker in one process, ` +
        `AI_WORKER_CONCURRENCY=${process.env.BENCH_AI_CONCURRENCY ?? '100 (default)'}); four OpenAI-compatible fake providers ` +
        'in a child process; the load generator, the service, the fakes and PostgreSQL share the cores ' +
        `(load average ${os.loadavg()[0].toFixed(1)} at the start: anything above that share was other work on the machine).`,
      '',
    );
    if (wanted('ai-wall')) {
      const r = await wallScenario(db, url, live, failures);
      const ms = (v) => `${Math.round(v)}`;
      lines.push(
        `**ai-wall** — one resolution at a time, providers answering in ${WALL_DELAYS.join('/')} ms, ${WALL_RUNS} runs: ` +
          `submit → COMPLETED seen by polling every 5 ms, median ${ms(median(r.walls))} ms ` +
          `(runs: ${r.walls.map(ms).join(', ')}; created → completed in the database: median ${ms(median(r.server))} ms). ` +
          `÷ slowest model (${r.slowest} ms) = **${r.ratio.toFixed(3)}** (goal ≤ 1.1: ${r.ratio <= 1.1 ? 'met' : 'NOT met'}).`,
        '',
      );
      process.stderr.write(`ai-wall: ratio ${r.ratio.toFixed(3)}\n`);
    }
    const ms2 = (/** @type {number | null} */ v) => (v === null ? '—' : v.toFixed(2));
    if (wanted('ai-load')) {
      const r = await loadScenario(db, url, live, prober, failures);
      lines.push(
        `**ai-load** — ${LOAD_COUNT} resolutions submitted at once, all four providers answering in ${LOAD_DELAY} ms: ` +
          `all accepted in ${Math.round(r.accepted)} ms; all COMPLETED with their callback rows written after ` +
          `**${(r.elapsed / 1000).toFixed(2)} s**. CPU per resolution: service ${ms2(r.cpuService)} ms, ` +
          `PostgreSQL ${ms2(r.cpuPostgres)} ms. Meanwhile ${r.probes} price requests (one every ${PROBE_INTERVAL_MS} ms, ` +
          `same process): p50 ${r.p50.toFixed(1)} ms, **p99 ${r.p99.toFixed(1)} ms**, max ${r.max.toFixed(1)} ms.`,
        '',
      );
      process.stderr.write(`ai-load: ${(r.elapsed / 1000).toFixed(2)} s, price p99 ${r.p99.toFixed(1)} ms\n`);
    }
    if (wanted('ai-tools')) {
      const wall = await wallScenario(db, url, live, failures, true);
      // The same load with tools and without, in this run and without price probes (their CPU would
      // count against the longer run): the baseline of the CPU goal.
      const bare = await loadScenario(db, url, live, prober, failures, { probe: false });
      const r = await loadScenario(db, url, live, prober, failures, { tools: true, probe: false });
      const ms = (v) => `${Math.round(v)}`;
      const cpuRatio =
        r.cpuService === null || bare.cpuService === null ? null : r.cpuService / bare.cpuService;
      lines.push(
        `**ai-tools** — each model first calls \`sibyl_price\` and answers from its result (two calls a model, ` +
          `each after its delay). One resolution at a time, providers answering in ${WALL_DELAYS.join('/')} ms a call, ` +
          `${WALL_RUNS} runs: median ${ms(median(wall.walls))} ms (runs: ${wall.walls.map(ms).join(', ')}; in the ` +
          `database: median ${ms(median(wall.server))} ms) ÷ the slowest model's two calls (${wall.slowest} ms) = ` +
          `**${wall.ratio.toFixed(3)}** (goal ≤ 1.05: ${wall.ratio <= 1.05 ? 'met' : 'NOT met'}). ` +
          `${LOAD_COUNT} at once, ${LOAD_DELAY} ms a call: all COMPLETED after ${(r.elapsed / 1000).toFixed(2)} s; ` +
          `CPU per resolution: service ${ms2(r.cpuService)} ms with tools, ${ms2(bare.cpuService)} ms without ` +
          `(**${cpuRatio === null ? '—' : cpuRatio.toFixed(2)}×**, goal ≤ 1.2: ${cpuRatio !== null && cpuRatio <= 1.2 ? 'met' : 'NOT met'}), ` +
          `PostgreSQL ${ms2(r.cpuPostgres)} ms with, ${ms2(bare.cpuPostgres)} ms without` +
          ` (both without price probes; callback attempts in the window: ${r.attempts} with, ${bare.attempts} without).`,
        '',
      );
      process.stderr.write(
        `ai-tools: ratio ${wall.ratio.toFixed(3)}, service CPU ${ms2(r.cpuService)} / ${ms2(bare.cpuService)} ms, ` +
          `callback attempts ${r.attempts} / ${bare.attempts}\n`,
      );
    }
    const report = await reconcileLedger(db);
    if (!report.ok) failures.push('AI bench: the ledger does not reconcile');
    const [charges] = await db.query(
      `SELECT count(*) AS n FROM ledger_entries WHERE kind = 'charge' AND operation = 'resolveWithAi'`,
    );
    const [requests] = await db.query(`SELECT count(*) AS n FROM ai_requests WHERE status = 'COMPLETED'`);
    if (charges.n !== requests.n)
      failures.push(`AI bench: ${charges.n} charges for ${requests.n} resolutions`);
    lines.push(
      `Command: \`BENCH_SCENARIOS=${(only ?? AI_SCENARIOS).filter((s) => AI_SCENARIOS.includes(s)).join(',')} npm run bench\`. ` +
        `Ledger reconciled: ${report.ok ? 'yes' : 'NO'}.`,
    );
  } finally {
    await db.close();
    await admin.exec(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.close();
  }
  const section = `${lines.join('\n')}\n`;
  process.stdout.write(`\n${section}\n`);
  if (failures.length === 0 && writeDocs && AI_SCENARIOS.every(wanted)) {
    const docPath = new URL('../docs/performance.md', import.meta.url);
    const doc = readFileSync(docPath, 'utf8');
    const start = '<!-- bench-ai:start -->';
    const end = '<!-- bench-ai:end -->';
    writeFileSync(
      docPath,
      `${doc.slice(0, doc.indexOf(start) + start.length)}\n${section}${doc.slice(doc.indexOf(end))}`,
    );
  }
  return failures;
}
