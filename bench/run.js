// `npm run bench`: the real service against bare Fastify, side by side, with a ledger
// reconciliation after every scenario. Writes a Markdown table to stdout and docs/performance.md.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { migrate } from '../dist/db/migrate.js';
import { PgliteDatabase } from '../dist/db/pglite.js';
import { PostgresDatabase } from '../dist/db/postgres.js';
import { reconcileLedger } from '../dist/ledger/ledger.js';
import { AI_SCENARIOS, runAiBench } from './ai.js';
import {
  fundedAccount,
  median,
  postgresCpuSeconds,
  postgresCpuSince,
  processCpuSeconds,
  randomMint,
  startProcess,
  stopProcess,
  usd,
  waitForHttp,
} from './lib.js';
import { ADMIN_TOKEN, loadMarkets, marketScenarios, marketTargets } from './markets.js';

/**
 * @typedef {import('../dist/db/database.js').Database} Database
 * @typedef {import('./lib.js').Schemas} Schemas
 * @typedef {Awaited<ReturnType<typeof fundedAccount>>} Funded
 * @typedef {import('./lib.js').Scenario} Scenario
 * @typedef {import('./lib.js').LoadResult} LoadResult
 */

/**
 * The hot-path balances, summed (int8: a bigint from either database adapter), and the newest ledger
 * entry before a run.
 * @typedef {{ balance: bigint, max_id?: bigint }} LedgerState
 */

const ROOT = new URL('..', import.meta.url);
const BIN = new URL('bin/sibyl.js', ROOT).pathname;
const DB_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const WRITE_DOCS = process.env.BENCH_WRITE_DOCS !== '0';
// A comma-separated list of scenario ids to run (hello-world always runs with price scenarios); a
// partial run never writes the price table of docs/performance.md. The AI scenarios (ai-wall,
// ai-load) write their own section when both ran.
const ONLY = process.env.BENCH_SCENARIOS?.split(',').map((id) => id.trim());
// Another benchmark on the same machine needs other ports (a server that cannot bind would leave
// the other run's server answering in its place).
const PORT_BASE = Number(process.env.BENCH_PORT_BASE ?? 3901);
const PORTS = {
  hello: PORT_BASE,
  pg: PORT_BASE + 1,
  pglite: PORT_BASE + 2,
  unbatched: PORT_BASE + 3,
  listUncached: PORT_BASE + 4,
};
const CENT = 10_000n;
const FUNDS = 10_000_000n * 1_000_000n; // 10,000,000 USD of play money per account

const SERVICE_ENV = {
  // Charge-coalescing and market settings can be varied from the command line to compare them.
  ...Object.fromEntries(
    Object.entries(process.env).filter(([k]) => k.startsWith('CHARGE_') || k.startsWith('MARKETS_')),
  ),
  LOG_LEVEL: 'warn',
  HOST: '127.0.0.1',
  // The benchmark measures billing, not the rate limiter refusing it.
  RATE_LIMIT_PER_SECOND: '1000000000',
  RATE_LIMIT_BURST: '1000000000',
  ADMIN_TOKEN,
};

const MARKET_SCENARIOS = [
  'market-detail',
  'markets-list',
  'markets-list-5',
  'markets-list-uncached',
  'market-ingest',
  'market-detail-cold',
];
const wantsMarkets = !ONLY || MARKET_SCENARIOS.some((id) => ONLY.includes(id));

/**
 * @param {string} url
 * @param {string} name
 */
function withDatabase(url, name) {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * A sandbox account with FUNDS and a key with every permission.
 * @param {Database} db
 * @param {string} label
 */
const funded = (db, label) => fundedAccount(db, { label, funds: FUNDS });

const BATCH_SYMBOLS = [
  ...['SOL', 'BTC', 'ETH', 'USDC', 'USDT', 'BONK', 'JUP', 'RAY', 'ORCA', 'PYTH'],
  ...Array.from({ length: 40 }, randomMint),
];

let idempotencyKeys = 0;
let batchSequence = 0;

/**
 * @param {Record<'hot' | 'hotAlerts' | 'batch' | 'batchKeyed' | 'scheduler' | 'unbatched' | 'market' | 'list', Funded> & { spread: Funded[] }} pg
 * @param {Funded} pglite
 * @returns {Scenario[]}
 */
function scenarios(pg, pglite) {
  const hot = pg.hot;
  const spread = pg.spread;
  /** @type {Scenario[]} */
  const all = [
    {
      id: 'hello',
      title: 'Bare Fastify hello-world',
      port: PORTS.hello,
      method: 'GET',
      path: '/',
      proc: 'hello',
    },
    {
      id: 'price-hot',
      title: 'GET /api/v1/price/SOL, one hot account (PostgreSQL)',
      port: PORTS.pg,
      method: 'GET',
      path: '/api/v1/price/SOL',
      headers: { authorization: `Bearer ${hot.key}` },
      price: CENT,
      ledger: 'pg',
      accounts: [hot.accountId],
      proc: 'pg',
    },
    {
      // The same hot path on an account with three low-balance thresholds (docs/webhooks.md#balance-alerts)
      // that the run never crosses: what checking them in the charge statement costs.
      id: 'price-hot-alerts',
      title: 'The same, on an account with 3 balance-alert thresholds (never crossed)',
      port: PORTS.pg,
      method: 'GET',
      path: '/api/v1/price/SOL',
      headers: { authorization: `Bearer ${pg.hotAlerts.key}` },
      price: CENT,
      ledger: 'pg',
      accounts: [pg.hotAlerts.accountId],
      proc: 'pg',
    },
    {
      id: 'price-hot-unbatched',
      title: 'The same, one statement per charge (CHARGE_BATCHING=false)',
      port: PORTS.unbatched,
      method: 'GET',
      path: '/api/v1/price/SOL',
      headers: { authorization: `Bearer ${pg.unbatched.key}` },
      price: CENT,
      ledger: 'pg',
      accounts: [pg.unbatched.accountId],
      proc: 'unbatched',
    },
    {
      id: 'price-spread',
      title: 'GET /api/v1/price/SOL, 100 accounts (PostgreSQL)',
      port: PORTS.pg,
      method: 'GET',
      path: '/api/v1/price/SOL',
      // One prepared request per account, which every connection cycles through: the load
      // generator then costs what it costs for one account (a per-request setup hook costs more).
      variants: spread.map((a) => ({ headers: { authorization: `Bearer ${a.key}` } })),
      price: CENT,
      ledger: 'pg',
      accounts: spread.map((a) => a.accountId),
      proc: 'pg',
    },
    {
      id: 'batch',
      title: 'POST /api/v1/price/batch, 50 symbols (PostgreSQL)',
      port: PORTS.pg,
      method: 'POST',
      path: '/api/v1/price/batch',
      headers: { authorization: `Bearer ${pg.batch.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ symbols: BATCH_SYMBOLS }),
      // Built anew for every request, as the keyed scenario must (a fresh key each time), so that the
      // load generator does the same work in both and the ratio is the service's (the header is ignored).
      setupRequest: (request) => ({
        ...request,
        headers: { ...request.headers, 'x-bench-sequence': `bench-${process.pid}-${++batchSequence}` },
      }),
      // 0.05 + 0.01 per distinct symbol requested: 10 listed tokens and 40 unknown mints (items with an error).
      price: 5n * CENT + 50n * CENT,
      ledger: 'pg',
      accounts: [pg.batch.accountId],
      proc: 'pg',
    },
    {
      id: 'batch-idempotent',
      title: 'The same, each request with its own Idempotency-Key',
      port: PORTS.pg,
      method: 'POST',
      path: '/api/v1/price/batch',
      headers: { authorization: `Bearer ${pg.batchKeyed.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ symbols: BATCH_SYMBOLS }),
      // A fresh key per request: every one is a first request, charged and stored, none a replay.
      setupRequest: (request) => ({
        ...request,
        headers: { ...request.headers, 'idempotency-key': `bench-${process.pid}-${++idempotencyKeys}` },
      }),
      price: 5n * CENT + 50n * CENT,
      ledger: 'pg',
      accounts: [pg.batchKeyed.accountId],
      proc: 'pg',
    },
    // After the keyed batch, so that the two batches run back to back in every round.
    ...marketScenarios(pg, PORTS.pg, PORTS.listUncached),
    {
      id: 'schedule',
      title: 'POST /api/v1/price/scheduled (a job and its charge in one transaction, PostgreSQL)',
      port: PORTS.pg,
      method: 'POST',
      path: '/api/v1/price/scheduled',
      headers: { authorization: `Bearer ${pg.scheduler.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        symbol: 'SOL',
        scheduledFor: new Date(Date.now() + 300 * 86_400_000).toISOString(),
      }),
      price: 5n * CENT,
      ledger: 'pg',
      accounts: [pg.scheduler.accountId],
      proc: 'pg',
    },
    {
      id: 'price-embedded',
      title: 'GET /api/v1/price/SOL, one account (embedded PGlite)',
      port: PORTS.pglite,
      method: 'GET',
      path: '/api/v1/price/SOL',
      headers: { authorization: `Bearer ${pglite.key}` },
      price: CENT,
      ledger: 'api',
      accounts: [pglite.accountId],
      apiKey: pglite.key,
      proc: 'pglite',
    },
  ];
  return all.filter((s) => !ONLY || s.id === 'hello' || ONLY.includes(s.id));
}

/**
 * Runs a fixed number of requests (sized from the warm-up's rate to last about DURATION seconds)
 * rather than a fixed time: a timed run abandons the requests in flight when the clock stops, and
 * those are charged without their answers being counted, which would spoil the reconciliation.
 */
/**
 * @param {Scenario} s
 * @param {{ amount: number | undefined }} limit
 * @param {number | undefined} pid
 * @returns {Promise<LoadResult>}
 */
async function load(s, limit, pid) {
  const request = {
    method: s.method,
    path: s.path,
    headers: s.headers ?? {},
    ...(s.body ? { body: s.body } : {}),
    ...(s.setupRequest ? { setupRequest: s.setupRequest } : {}),
  };
  const requests = s.variants ? s.variants.map((v) => ({ ...request, ...v })) : [request];
  const cpu = {
    service: processCpuSeconds(pid),
    postgres: s.ledger === 'pg' ? postgresCpuSeconds() : null,
    load: process.cpuUsage(),
  };
  const started = performance.now();
  const result = await autocannon({
    url: `http://127.0.0.1:${s.port}`,
    connections: s.connections ?? CONNECTIONS,
    ...limit,
    timeout: 30,
    // A run of a fixed number of requests ends at autocannon's next sample tick after the last
    // answer: at the default 1 s, up to a second of idle time was counted in the rate (every rate of
    // a 6 s run a multiple of 1/6 of the requests, ±17% from one run to the next).
    sampleInt: 20,
    requests,
  });
  const answered = result['2xx'] + result.non2xx;
  // Completed answers over wall-clock time (autocannon's own average is over whole-second samples).
  result.rps = answered / ((performance.now() - started) / 1000);
  // CPU time per answered request, in microseconds, of the service process, of every PostgreSQL
  // process and of the load generator (this process): where the machine's two cores go.
  const perRequest = (/** @type {number | null} */ seconds) =>
    seconds === null ? null : (seconds * 1e6) / answered;
  const serviceAfter = processCpuSeconds(pid);
  const loadCpu = process.cpuUsage(cpu.load);
  result.cpu = {
    service: perRequest(cpu.service === null || serviceAfter === null ? null : serviceAfter - cpu.service),
    postgres: perRequest(cpu.postgres && postgresCpuSince(cpu.postgres, postgresCpuSeconds())),
    load: perRequest((loadCpu.user + loadCpu.system) / 1e6),
  };
  return result;
}

/**
 * @param {number} port
 * @param {string | undefined} key
 */
async function apiBalance(port, key) {
  const r = await fetch(`http://127.0.0.1:${port}/api/v1/account`, {
    headers: { authorization: `Bearer ${key}` },
  });
  const body = /** @type {Schemas['Account']} */ (await r.json());
  const [whole, frac = ''] = body.balanceUsd.split('.');
  return BigInt(whole) * 1_000_000n + BigInt(frac.padEnd(6, '0'));
}

/**
 * @param {Database} db
 * @param {string[] | undefined} accounts
 */
async function ledgerState(db, accounts) {
  const rows = await db.query(
    `SELECT COALESCE(SUM(balance_micros), 0)::bigint AS balance, (SELECT COALESCE(MAX(id), 0) FROM ledger_entries) AS max_id
       FROM accounts WHERE id = ANY($1::text[])`,
    [accounts],
  );
  return /** @type {LedgerState} */ (rows[0]);
}

/**
 * The reconciliation every scenario must pass: successes × price == balance drop == Σ ledger.
 * @param {Scenario} s
 * @param {LoadResult} result
 * @param {LedgerState} before
 * @param {LedgerState} after
 * @param {Database} db
 */
async function reconcile(s, result, before, after, db) {
  if (s.price === undefined) throw new Error(`${s.id} is reconciled but has no price`);
  const ok = BigInt(result['2xx']);
  const drop = before.balance - after.balance;
  const expected = ok * s.price;
  const problems = [];
  if (drop !== expected)
    problems.push(`balance dropped ${usd(drop)} but ${ok} × ${usd(s.price)} = ${usd(expected)}`);
  if (s.ledger === 'pg') {
    const [row] = /** @type {{ n: bigint, total: bigint }[]} */ (
      await db.query(
        `SELECT count(*) AS n, COALESCE(-SUM(amount_micros), 0)::bigint AS total FROM ledger_entries
          WHERE id > $1 AND kind = 'charge' AND account_id = ANY($2::text[])`,
        [before.max_id, s.accounts],
      )
    );
    if (BigInt(row.n) !== ok) problems.push(`${row.n} charge entries for ${ok} successful responses`);
    if (row.total !== drop) problems.push(`ledger charges ${usd(row.total)} vs balance drop ${usd(drop)}`);
  }
  if (result.non2xx > 0 || result.errors > 0)
    problems.push(`${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return problems;
}

/**
 * Every answer's remainingBalanceUsd equals its ledger entry's running balance (checked, not timed).
 * @param {Scenario} s
 * @param {Database} db
 */
async function checkRemainingBalances(s, db) {
  /** @type {{ requestId: string, cost: string, remaining: string }[]} */
  const answers = [];
  const worker = async () => {
    for (let i = 0; i < 40; i++) {
      const r = await fetch(`http://127.0.0.1:${s.port}${s.path}`, { headers: s.headers });
      const body = /** @type {Schemas['PriceResult']} */ (await r.json());
      answers.push({ requestId: body.requestId, cost: body.costUsd, remaining: body.remainingBalanceUsd });
    }
  };
  await Promise.all(Array.from({ length: 50 }, worker));
  const rows = /** @type {{ request_id: string, amount_micros: bigint, balance_after_micros: bigint }[]} */ (
    await db.query(
      'SELECT request_id, amount_micros, balance_after_micros FROM ledger_entries WHERE request_id = ANY($1::text[])',
      [answers.map((a) => a.requestId)],
    )
  );
  const byRequest = new Map(rows.map((r) => [r.request_id, r]));
  const wrong = answers.filter((a) => {
    const entry = byRequest.get(a.requestId);
    return !entry || usd(-entry.amount_micros) !== a.cost || usd(entry.balance_after_micros) !== a.remaining;
  });
  return { checked: answers.length, wrong: wrong.length };
}

/** @param {string} pkg */
function versionOf(pkg) {
  return JSON.parse(readFileSync(new URL(`node_modules/${pkg}/package.json`, ROOT), 'utf8')).version;
}

async function main() {
  const benchDb = `sibyl_bench_${process.pid}`;
  const admin = new PostgresDatabase(DB_URL, { poolSize: 1 });
  await admin.exec(`CREATE DATABASE "${benchDb}"`);
  const dbUrl = withDatabase(DB_URL, benchDb);
  const db = new PostgresDatabase(dbUrl, { poolSize: 4 });
  const dataDir = join(mkdtempSync(join(os.tmpdir(), 'sibyl-bench-')), 'data');
  const children = [];
  const failures = [];
  try {
    await migrate(db);
    const [pgVersion] = await db.query('SHOW server_version');
    const pg = {
      hot: await funded(db, 'hot'),
      hotAlerts: await funded(db, 'hot-alerts'),
      spread: await Promise.all(Array.from({ length: 100 }, (_, i) => funded(db, `spread-${i}`))),
      batch: await funded(db, 'batch'),
      batchKeyed: await funded(db, 'batch-keyed'),
      scheduler: await funded(db, 'scheduler'),
      unbatched: await funded(db, 'unbatched'),
      market: await funded(db, 'market'),
      list: await funded(db, 'list'),
    };
    await db.query(`UPDATE accounts SET low_balance_micros = '{5000000,1000000,500000}' WHERE id = $1`, [
      pg.hotAlerts.accountId,
    ]);
    const embedded = (await PgliteDatabase.open(dataDir)).db;
    await migrate(embedded);
    const pglite = await funded(embedded, 'embedded');
    await embedded.close();

    const hello = startProcess('hello', [new URL('hello.js', import.meta.url).pathname], {
      PORT: String(PORTS.hello),
    });
    const servePg = startProcess('sibyl (PostgreSQL)', [BIN, 'serve'], {
      ...SERVICE_ENV,
      PORT: String(PORTS.pg),
      DATABASE_URL: dbUrl,
    });
    const servePglite = startProcess('sibyl (PGlite)', [BIN, 'serve'], {
      ...SERVICE_ENV,
      PORT: String(PORTS.pglite),
      SIBYL_DATA_DIR: dataDir,
    });
    const serveUnbatched = startProcess('sibyl (PostgreSQL, unbatched)', [BIN, 'serve'], {
      ...SERVICE_ENV,
      CHARGE_BATCHING: 'false',
      PORT: String(PORTS.unbatched),
      DATABASE_URL: dbUrl,
    });
    // The list read from the database on every request, for comparison with the cached list.
    const serveListUncached = startProcess('sibyl (PostgreSQL, list cache off)', [BIN, 'serve'], {
      ...SERVICE_ENV,
      MARKETS_LIST_CACHE: 'false',
      PORT: String(PORTS.listUncached),
      DATABASE_URL: dbUrl,
    });
    children.push(hello, servePg, servePglite, serveUnbatched, serveListUncached);
    await waitForHttp(`http://127.0.0.1:${PORTS.listUncached}/readyz`, serveListUncached);
    await waitForHttp(`http://127.0.0.1:${PORTS.unbatched}/readyz`, serveUnbatched);
    await waitForHttp(`http://127.0.0.1:${PORTS.hello}/`, hello);
    await waitForHttp(`http://127.0.0.1:${PORTS.pg}/readyz`, servePg);
    await waitForHttp(`http://127.0.0.1:${PORTS.pglite}/readyz`, servePglite);
    for (const child of children) {
      if (child.exitCode !== null) throw new Error(`${child.name} exited (port in use?):\n${child.output()}`);
    }

    // Market data through the admin NDJSON route (which measures ingestion), then the cold detail
    // right after it and once autovacuum's work is done (VACUUM ANALYZE, run here so it is not left
    // to chance), which is the state the HTTP scenarios run in.
    const markets = wantsMarkets ? await loadMarkets(db, dbUrl, PORTS.pg) : null;

    const list = scenarios(pg, pglite);
    const pids = {
      hello: hello.pid,
      pg: servePg.pid,
      pglite: servePglite.pid,
      unbatched: serveUnbatched.pid,
      listUncached: serveListUncached.pid,
    };
    /** @type {Map<string, LoadResult[]>} */
    const runs = new Map(list.map((s) => [s.id, []]));
    /** @param {string} id */
    const runsOf = (id) => {
      const results = runs.get(id);
      if (!results) throw new Error(`no scenario ${id} in this run`);
      return results;
    };
    // Warm-up: JIT, caches and connection pools, unmeasured; it also sizes each measured run.
    const amounts = new Map();
    let embeddedSuccesses = 0n;
    for (const s of list) {
      // A short burst to estimate the rate, then about WARMUP seconds more: a first round measured
      // right after a short warm-up ran at half speed (hello-world 29,000 then 58,000 req/s).
      const probe = await load(s, { amount: CONNECTIONS * 200 }, pids[s.proc]);
      const warm = await load(s, { amount: Math.round(probe.rps * WARMUP) }, pids[s.proc]);
      if (s.ledger === 'api') embeddedSuccesses += BigInt(probe['2xx'] + warm['2xx']);
      amounts.set(s.id, Math.max(CONNECTIONS * 20, Math.round(warm.rps * DURATION)));
    }
    // The statistics autovacuum would have gathered within a minute of the warm-up's writes. Without
    // them, plans prepared while a table was empty stay the plans of an empty table for the whole run:
    // a sequential scan of idempotency_keys each batch, 5.8 ms a statement by auto_explain.
    await db.exec('ANALYZE');
    for (let round = 1; round <= ROUNDS; round++) {
      for (const s of list) {
        const before =
          s.ledger === 'pg'
            ? await ledgerState(db, s.accounts)
            : s.ledger === 'api'
              ? { balance: await apiBalance(s.port, s.apiKey) }
              : null;
        const result = await load(s, { amount: amounts.get(s.id) }, pids[s.proc]);
        process.stderr.write(
          `round ${round} ${s.id}: ${Math.round(result.rps)} req/s, p99 ${result.latency.p99} ms\n`,
        );
        if (before) {
          const after =
            s.ledger === 'pg'
              ? await ledgerState(db, s.accounts)
              : { balance: await apiBalance(s.port, s.apiKey) };
          const problems = await reconcile(s, result, before, after, db);
          for (const p of problems) failures.push(`${s.id}, round ${round}: ${p}`);
          if (s.ledger === 'api') embeddedSuccesses += BigInt(result['2xx']);
        }
        runsOf(s.id).push(result);
      }
    }
    const hotScenario = list.find((s) => s.id === 'price-hot');
    const remaining = hotScenario ? await checkRemainingBalances(hotScenario, db) : { checked: 0, wrong: 0 };
    if (remaining.wrong > 0)
      failures.push(
        `${remaining.wrong} of ${remaining.checked} remainingBalanceUsd values disagree with the ledger`,
      );
    const pgReport = await reconcileLedger(db);
    if (!pgReport.ok)
      failures.push(
        `PostgreSQL ledger does not reconcile: ${JSON.stringify(pgReport, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`,
      );

    await stopProcess(servePglite);
    const reopened = (await PgliteDatabase.open(dataDir)).db;
    const [embeddedCharges] = /** @type {{ n: bigint }[]} */ (
      await reopened.query(`SELECT count(*) AS n FROM ledger_entries WHERE kind = 'charge'`)
    );
    const embeddedReport = await reconcileLedger(reopened);
    await reopened.close();
    if (!embeddedReport.ok) failures.push('embedded ledger does not reconcile');
    if (BigInt(embeddedCharges.n) !== embeddedSuccesses) {
      failures.push(
        `embedded: ${embeddedCharges.n} charge entries for ${embeddedSuccesses} successful responses`,
      );
    }

    const helloRps = runsOf('hello').map((r) => r.rps);
    const rows = list.map((s) => {
      const rs = runsOf(s.id);
      const rps = median(rs.map((r) => r.rps));
      const ratios = rs.map((r, i) => r.rps / helloRps[i]);
      return {
        s,
        rps,
        p50: median(rs.map((r) => r.latency.p50)),
        p99: median(rs.map((r) => r.latency.p99)),
        ratio: median(ratios),
        ok: rs.reduce((n, r) => n + r['2xx'], 0),
        cpu: Object.fromEntries(
          ['service', 'postgres', 'load'].map((k) => {
            const values = rs.map((r) => r.cpu[k]).filter((v) => v !== null);
            return [k, values.length > 0 ? median(values) : null];
          }),
        ),
      };
    });
    const micros = (v) => (v === null ? '—' : v.toFixed(0));
    const table = [
      '| Scenario | req/s | p50 ms | p99 ms | × hello-world | CPU µs/request: service · PostgreSQL · load generator | 2xx (all rounds) | reconciled |',
      '|---|---:|---:|---:|---:|---:|---:|---|',
      ...rows.map(
        (r) =>
          `| ${r.s.title} | ${Math.round(r.rps).toLocaleString('en-US')} | ${r.p50} | ${r.p99} | ${r.ratio.toFixed(2)} | ${micros(r.cpu.service)} · ${micros(r.cpu.postgres)} · ${micros(r.cpu.load)} | ${r.ok.toLocaleString('en-US')} | ${r.s.price ? (failures.some((f) => f.startsWith(r.s.id)) ? 'NO' : 'yes') : '—'} |`,
      ),
    ].join('\n');
    const hot = rows.find((r) => r.s.id === 'price-hot');
    const spreadRow = rows.find((r) => r.s.id === 'price-spread');
    const batchRow = rows.find((r) => r.s.id === 'batch');
    const keyedRow = rows.find((r) => r.s.id === 'batch-idempotent');
    const targets = [
      hot &&
        `- Hot account at least 0.35 × hello-world: ${hot.ratio.toFixed(2)} → ${hot.ratio >= 0.35 ? 'met' : 'NOT met'}`,
      hot && `- Hot account p99 at most 25 ms: ${hot.p99} ms → ${hot.p99 <= 25 ? 'met' : 'NOT met'}`,
      hot &&
        spreadRow &&
        `- 100 accounts at least as fast as one: ${Math.round(spreadRow.rps)} vs ${Math.round(hot.rps)} req/s → ${spreadRow.rps >= hot.rps * 0.97 ? 'met' : 'NOT met'}`,
      batchRow && keyedRow && keyedVerdict(runsOf('batch'), runsOf('batch-idempotent')),
      hot &&
        `- remainingBalanceUsd checked against the ledger for ${remaining.checked} hot-account answers: ${remaining.wrong} wrong`,
      ...marketTargets(rows, runs, markets, CONNECTIONS),
    ]
      .filter(Boolean)
      .join('\n');
    const cpus = os.cpus();
    const meta = [
      `Run ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpus.length} cores (${cpus[0]?.model.trim()}), ${Math.round(os.totalmem() / 2 ** 30)} GiB;`,
      `Node.js ${process.version}, Fastify ${versionOf('fastify')}, PostgreSQL ${pgVersion.server_version}, PGlite ${versionOf('@electric-sql/pglite')}, autocannon ${versionOf('autocannon')}.`,
      `${CONNECTIONS} connections; each scenario runs a fixed number of requests sized to last about ${DURATION} s, ${ROUNDS} rounds alternating the scenarios (medians shown; ratios taken within each round).`,
      `The load generator, the servers and PostgreSQL share the machine's cores. CPU per request is read from /proc before and after each run: the service process, every PostgreSQL process, and the load generator's own process (medians).`,
      '',
      `Command: \`npm run bench\` (BENCH_DURATION=${DURATION} BENCH_ROUNDS=${ROUNDS} BENCH_CONNECTIONS=${CONNECTIONS}).`,
    ].join('\n');
    const section = `${meta}\n\n${table}\n\n${targets}\n`;
    process.stdout.write(`\n${section}\n`);
    if (failures.length === 0 && WRITE_DOCS && !ONLY) {
      const docPath = new URL('docs/performance.md', ROOT);
      const doc = readFileSync(docPath, 'utf8');
      const start = '<!-- bench:start -->';
      const end = '<!-- bench:end -->';
      const updated = `${doc.slice(0, doc.indexOf(start) + start.length)}\n${section}${doc.slice(doc.indexOf(end))}`;
      writeFileSync(docPath, updated);
    }
  } finally {
    for (const child of children) await stopProcess(child);
    await db.close();
    await admin.exec(`DROP DATABASE IF EXISTS "${benchDb}" WITH (FORCE)`);
    await admin.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (failures.length > 0) {
    process.stderr.write(`\nRECONCILIATION FAILED:\n${failures.map((f) => `- ${f}`).join('\n')}\n`);
    process.exit(1);
  }
}

// The AI scenarios (bench/ai.js) run after the price scenarios, or alone when only they are asked
// for; they write their own section of docs/performance.md.
const wantsPrices = !ONLY || ONLY.some((id) => !AI_SCENARIOS.includes(id));
if (wantsPrices) await main();
if (!ONLY || ONLY.some((id) => AI_SCENARIOS.includes(id))) {
  const failures = await runAiBench({ dbUrl: DB_URL, only: ONLY, writeDocs: WRITE_DOCS });
  if (failures.length > 0) {
    process.stderr.write(`\nAI BENCH FAILED:\n${failures.map((f) => `- ${f}`).join('\n')}\n`);
    process.exit(1);
  }
}

/**
 * The keyed batch against the unkeyed one, taken within each round (the two run back to back, so
 * the machine's speed, which drifts by a third within minutes here, cancels out) and the median of
 * those; each round's ratio is listed.
 */
/**
 * @param {LoadResult[]} plain
 * @param {LoadResult[]} keyed
 */
function keyedVerdict(plain, keyed) {
  const ratios = keyed.map((r, i) => r.rps / plain[i].rps);
  const ratio = median(ratios);
  return `- Batch with an Idempotency-Key at least 0.9 × without (median of the rounds' ratios: ${ratios.map((r) => r.toFixed(2)).join(', ')}): ${ratio.toFixed(2)} → ${ratio >= 0.9 ? 'met' : 'NOT met'}`;
}
