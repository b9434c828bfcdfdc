// `npm run bench:webhooks`: webhook delivery on PostgreSQL, one `sibyl work` process, a real HTTPS
// receiver on loopback (in this process).
//   latency    — deliveries committed at 100/s for 10 s, one transaction each: time from the commit
//                returning to the receiver's request, p50/p99 (goal p99 ≤ 250 ms);
//   throughput — 5,000 deliveries committed at once: deliveries per second until the last arrives,
//                beside a bare undici fetch loop (bench/fetch-loop.js, its own process) posting the
//                same number to the same receiver at the worker's concurrency; CPU per delivery of each;
//   fanout     — 1,000 deposits credited in one transaction by the watcher's crediting path, each
//                `deposit.credited` fanned out to 3 endpoints of the account (3,000 deliveries):
//                commit → receiver p50/p99 and the total time (goal p99 ≤ 1 s; bench/webhooks-fanout.js).
// BENCH_WEBHOOKS_SCENARIOS=latency,throughput,fanout chooses (default: all). BENCH_FANOUT_ROUNDS=2
// runs the fanout again on the same worker (each round its own account and rows, prefixed `r1`, …):
// the first burst meets a worker whose code V8 has not compiled yet, the next ones a warm one. Prints a
// Markdown table; figures go to docs/performance.md.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import os from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { createAccount } from '../dist/accounts/accounts.js';
import { createContext, withTransaction } from '../dist/context.js';
import { migrate } from '../dist/db/migrate.js';
import { PostgresDatabase } from '../dist/db/postgres.js';
import { systemClock } from '../dist/lib/clock.js';
import { webhookOutbox } from '../dist/webhooks/outbox.js';
import { clearSecretBox } from '../dist/webhooks/secret-box.js';
import { cpuSecondsSince, processCpuSeconds, startProcess, stopProcess } from './lib.js';
import { listeningPort } from './listening.js';
import { fanoutScenario } from './webhooks-fanout.js';

const BIN = new URL('../bin/sibyl.js', import.meta.url).pathname;
const DB_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const RATE = 100;
const LATENCY_SECONDS = 10;
const BULK = Number(process.env.BENCH_WEBHOOKS ?? 5000);
const CONCURRENCY = Number(process.env.WEBHOOK_CONCURRENCY ?? 50);
const SCENARIOS = ['latency', 'throughput', 'fanout'];
const CHOSEN = (process.env.BENCH_WEBHOOKS_SCENARIOS ?? SCENARIOS.join(','))
  .split(',')
  .map((id) => id.trim());
for (const id of CHOSEN) {
  if (!SCENARIOS.includes(id))
    throw new Error(`BENCH_WEBHOOKS_SCENARIOS: unknown ${id} (${SCENARIOS.join(', ')})`);
}

const percentile = (sorted, p) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

async function receiver() {
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
  });
  const arrivals = new Map();
  const server = createServer({ cert: pems.cert, key: pems.private }, (req, res) => {
    const id = req.headers['webhook-id'];
    req.resume();
    req.on('end', () => {
      if (id && !arrivals.has(id)) arrivals.set(id, Date.now());
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
  const caFile = join(mkdtempSync(join(os.tmpdir(), 'sibyl-bench-ca-')), 'ca.pem');
  writeFileSync(caFile, pems.cert);
  return { server, arrivals, caFile, url: `https://127.0.0.1:${listeningPort(server)}/hook` };
}

async function waitFor(condition, what, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function fetchLoop(rx) {
  return new Promise((resolve, reject) => {
    const script = new URL('./fetch-loop.js', import.meta.url).pathname;
    const child = spawn(process.execPath, [script, rx.url, String(BULK), String(CONCURRENCY), rx.caFile]);
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => {
      out += c;
    });
    child.stderr.on('data', (c) => {
      err += c;
    });
    child.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`fetch loop failed: ${err}`)),
    );
  });
}

/**
 * Latency at 100 deliveries/s offered, one transaction each.
 * @returns {Promise<[string, string][]>}
 */
async function latencyScenario(ctx, enqueue, rx) {
  const committed = new Map();
  const startedAt = performance.now();
  for (let i = 0; i < RATE * LATENCY_SECONDS; i++) {
    const due = startedAt + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const id = await withTransaction(ctx, (tx) => enqueue(tx, i));
    committed.set(id, Date.now());
  }
  await waitFor(() => [...committed.keys()].every((id) => rx.arrivals.has(id)), 'the latency deliveries');
  const latencies = [...committed].map(([id, at]) => rx.arrivals.get(id) - at).sort((a, b) => a - b);
  return [
    ['commit → receiver, p50 (100/s offered)', `${percentile(latencies, 50)} ms`],
    ['commit → receiver, p99 (100/s offered)', `${percentile(latencies, 99)} ms`],
    ['commit → receiver, max', `${latencies[latencies.length - 1]} ms`],
  ];
}

/**
 * Throughput: BULK deliveries committed at once, beside the bare fetch loop.
 * @returns {Promise<[string, string][]>}
 */
async function throughputScenario(ctx, enqueue, rx, worker) {
  const before = rx.arrivals.size;
  const cpuBefore = processCpuSeconds(worker.pid);
  const ids = await withTransaction(ctx, async (tx) => {
    const out = [];
    for (let i = 0; i < BULK; i++) out.push(await enqueue(tx, `bulk_${i}`));
    return out;
  });
  const bulkCommitted = Date.now();
  // Counting is cheap; checking 5,000 ids every 5 ms would compete with the receiver for CPU.
  await waitFor(() => rx.arrivals.size >= before + BULK, 'the bulk deliveries', 600_000);
  const bulkSeconds = (Math.max(...ids.map((id) => rx.arrivals.get(id))) - bulkCommitted) / 1000;
  const workerCpu = cpuSecondsSince(worker.pid, cpuBefore);

  // The bare fetch loop against the same receiver (its own process: this one serves the receiver).
  const baseline = await fetchLoop(rx);

  const workerRate = BULK / bulkSeconds;
  const bareRate = BULK / baseline.seconds;
  return [
    [`deliveries/s, one worker (${BULK} at once, concurrency ${CONCURRENCY})`, workerRate.toFixed(0)],
    ['bare undici fetch loop, requests/s (same receiver, same concurrency)', bareRate.toFixed(0)],
    ['ratio worker / bare fetch', (workerRate / bareRate).toFixed(2)],
    ['worker CPU per delivery', workerCpu === null ? '—' : `${((workerCpu * 1e6) / BULK).toFixed(0)} µs`],
    ['bare fetch CPU per request', `${((baseline.cpuSeconds * 1e6) / BULK).toFixed(0)} µs`],
  ];
}

async function main() {
  const name = `sibyl_bench_webhooks_${process.pid}`;
  const admin = new PostgresDatabase(DB_URL, { poolSize: 1 });
  await admin.exec(`CREATE DATABASE "${name}"`);
  const dbUrl = new URL(DB_URL);
  dbUrl.pathname = `/${name}`;
  const db = new PostgresDatabase(dbUrl.toString(), { poolSize: 4 });
  const rx = await receiver();
  let worker;
  try {
    await migrate(db);
    const account = await createAccount(createContext(db, systemClock), { mode: 'sandbox' }, clearSecretBox);
    worker = startProcess('work', [BIN, 'work'], {
      LOG_LEVEL: 'warn',
      DATABASE_URL: dbUrl.toString(),
      NODE_EXTRA_CA_CERTS: rx.caFile,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_CONCURRENCY: String(CONCURRENCY),
    });
    await new Promise((r) => setTimeout(r, 3000)); // the worker connects and listens

    const ctx = createContext(db, systemClock);
    const enqueue = (tx, i) =>
      webhookOutbox.enqueueCallback(tx, {
        accountId: account.id,
        url: rx.url,
        type: 'price',
        status: 'completed',
        requestId: `req_bench_${i}`,
        data: { symbol: 'SOL', vwapPrice: 187.42, i },
      });

    /** @type {[string, string][]} */
    const rows = [];
    if (CHOSEN.includes('latency')) rows.push(...(await latencyScenario(ctx, enqueue, rx)));
    if (CHOSEN.includes('throughput')) rows.push(...(await throughputScenario(ctx, enqueue, rx, worker)));
    const rounds = Number(process.env.BENCH_FANOUT_ROUNDS ?? 1);
    for (let round = 0; CHOSEN.includes('fanout') && round < rounds; round++) {
      const fanout = await fanoutScenario(db, rx, waitFor, worker);
      for (const [measure, value] of fanout)
        rows.push([round === 0 ? measure : `r${round} ${measure}`, value]);
    }
    process.stdout.write(
      `| Measure | Value |\n|---|---|\n${rows.map((r) => `| ${r[0]} | ${r[1]} |`).join('\n')}\n`,
    );
  } finally {
    if (worker) await stopProcess(worker);
    rx.server.closeAllConnections();
    rx.server.close();
    await db.close();
    await admin.exec(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.close();
  }
}

await main();
