// Helpers of the benchmark runner: child processes, HTTP checks, base58, statistics.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createAccount } from '../dist/accounts/accounts.js';
import { createContext } from '../dist/context.js';
import { createKey } from '../dist/keys/keys.js';
import { PERMISSIONS } from '../dist/keys/permissions.js';
import { creditDeposit } from '../dist/ledger/ledger.js';
import { systemClock } from '../dist/lib/clock.js';
import { clearSecretBox } from '../dist/webhooks/secret-box.js';

/**
 * The service's answers, typed by its OpenAPI document (the client's generated types). A body read
 * with `response.json()` is `unknown`; the benchmarks name the schema the route documents.
 * @typedef {import('../client/src/schema.js').components['schemas']} Schemas
 */

/**
 * One request autocannon sends (its own shape; the package has no types).
 * @typedef {{ method: string, path: string, headers: Record<string, string>, body?: string }} BenchRequest
 */

/**
 * A measured scenario: the requests, the process that answers them and, for a billed route, what
 * reconciles it (`ledger`: read from PostgreSQL, or through the API for the embedded database).
 * @typedef {{
 *   id: string, title: string, port: number, method: string, path: string,
 *   proc: 'hello' | 'pg' | 'pglite' | 'unbatched' | 'listUncached' | 'pgBefore' | 'pgliteBefore',
 *   headers?: Record<string, string>, body?: string, connections?: number,
 *   variants?: { headers: Record<string, string> }[],
 *   setupRequest?: (request: BenchRequest) => BenchRequest,
 *   price?: bigint, ledger?: 'pg' | 'api', accounts?: string[], apiKey?: string, jobs?: boolean,
 * }} Scenario
 */

/**
 * A run's answer: the fields read of autocannon's result (untyped: the package ships no types), and
 * the rate and the CPU per request `load` adds.
 * @typedef {{
 *   '2xx': number, non2xx: number, errors: number, latency: { p50: number, p99: number },
 *   rps: number, cpu: Record<'service' | 'postgres' | 'load', number | null>,
 * }} LoadResult
 */

/**
 * A child process of the benchmark: its name and everything it printed so far, for error messages.
 * @typedef {import('node:child_process').ChildProcessByStdio<null, import('node:stream').Readable, import('node:stream').Readable>
 *   & { name: string, output: () => string }} BenchProcess
 */

/**
 * @param {string} name
 * @param {string[]} args
 * @param {Record<string, string | undefined>} env
 * @returns {BenchProcess}
 */
export function startProcess(name, args, env) {
  // BENCH_CPU_PROF_DIR: each service process writes a V8 CPU profile there when it stops.
  const profile = process.env.BENCH_CPU_PROF_DIR
    ? [
        '--cpu-prof',
        `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`,
        `--cpu-prof-name=${name}-${Date.now()}.cpuprofile`,
      ]
    : [];
  const child = spawn(process.execPath, [...profile, ...args], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c) => {
    output += c;
  });
  child.stderr.on('data', (c) => {
    output += c;
  });
  return Object.assign(child, { name, output: () => output });
}

/**
 * @param {string} url
 * @param {BenchProcess} child
 */
export async function waitForHttp(url, child, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (child.exitCode !== null) throw new Error(`${child.name} exited early:\n${child.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${child.name} never answered ${url}:\n${child.output()}`);
}

/** @param {import('node:child_process').ChildProcess} child */
export function stopProcess(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** A random, well-formed Solana address (base58 of 32 random bytes). */
export function randomMint() {
  const bytes = randomBytes(32);
  bytes[0] = bytes[0] || 1; // no leading zero byte, so the text is 43-44 characters
  let n = BigInt(`0x${bytes.toString('hex')}`);
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % 58n)] + out;
    n /= 58n;
  }
  return out;
}

/** @param {readonly number[]} values */
export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** The q-quantile (0–1) of `times`, the nearest rank below. */
export function percentile(times, q) {
  return [...times].sort((a, b) => a - b)[Math.min(times.length - 1, Math.floor(times.length * q))];
}

/**
 * `runs` calls of `fn`, `connections` at a time, after one warm-up call each: every call's time in
 * ms, the Node.js CPU a call in µs (process.cpuUsage) and the wall time in ms.
 * @param {() => Promise<unknown>} fn
 * @param {{ runs: number, connections: number }} options
 */
export async function concurrentCalls(fn, { runs, connections }) {
  await Promise.all(Array.from({ length: connections }, () => fn()));
  /** @type {number[]} */
  const times = [];
  let next = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next++ < runs) {
        const t = performance.now();
        await fn();
        times.push(performance.now() - t);
      }
    }),
  );
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { times, cpuUs: (used.user + used.system) / runs, wallMs };
}

/** @param {bigint} micros */
export function usd(micros) {
  const neg = micros < 0n;
  const abs = neg ? -micros : micros;
  let frac = (abs % 1_000_000n).toString().padStart(6, '0');
  while (frac.length > 2 && frac.endsWith('0')) frac = frac.slice(0, -1);
  return `${neg ? '-' : ''}${abs / 1_000_000n}.${frac}`;
}

const CLOCK_TICKS_PER_SECOND = 100; // USER_HZ on Linux

/**
 * CPU seconds (user + system) a process has used so far, from /proc; null where there is none.
 * @param {number | string | undefined} pid
 * @returns {number | null}
 */
export function processCpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/**
 * CPU seconds a process used since `before` (a `processCpuSeconds` reading); null where /proc is
 * missing, so that a figure nobody measured prints as none rather than as 0.
 * @param {number | undefined} pid
 * @param {number | null} before
 */
export function cpuSecondsSince(pid, before) {
  const now = processCpuSeconds(pid);
  return now === null || before === null ? null : now - before;
}

/**
 * CPU seconds used so far by each PostgreSQL process on the machine (server, backends, WAL writer).
 * @returns {Map<string, number> | null}
 */
export function postgresCpuSeconds() {
  let entries;
  try {
    entries = readdirSync('/proc');
  } catch {
    return null;
  }
  /** @type {Map<string, number>} */
  const byPid = new Map();
  for (const pid of entries) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
    } catch {
      continue;
    }
    const seconds = processCpuSeconds(pid);
    if (seconds !== null) byPid.set(pid, seconds);
  }
  return byPid;
}

/**
 * CPU seconds PostgreSQL used between two readings: what each process used since the first
 * reading (all of it, for a process started since). A process that ended in between is missed.
 */
/**
 * @param {Map<string, number> | null} before
 * @param {Map<string, number> | null} after
 */
export function postgresCpuSince(before, after) {
  if (before === null || after === null) return null;
  let total = 0;
  for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? 0);
  return total;
}

/**
 * A fresh account with `funds` micro-USD and one key with every permission, made through the domain
 * verbs as the operator's command line makes them (`(ctx, input)`).
 */
/**
 * @param {import('../dist/db/database.js').Database} db
 * @param {{ mode?: import('../dist/accounts/accounts.js').AccountMode, label: string, funds: bigint }} account
 */
export async function fundedAccount(db, { mode = 'sandbox', label, funds }) {
  const ctx = createContext(db, systemClock);
  const account = await createAccount(ctx, { mode }, clearSecretBox);
  if (funds > 0n) {
    await creditDeposit(ctx, {
      accountId: account.id,
      amountMicros: funds,
      reference: `bench-${label}-${account.id}`,
    });
  }
  const operator = { accountId: account.id, permissions: PERMISSIONS, expiresAt: null };
  const { key } = await createKey(ctx, { actor: operator, settings: { name: `bench ${label}` } });
  return { accountId: account.id, key };
}

/**
 * A market's `count` trades as a minute-spaced random walk bulk-loaded into market_trades, the
 * newest at `end`, ids `<prefix>1` … (no totals, candles or positions: see buildCandles).
 * @param {import('../dist/db/database.js').Queryable} db
 * @param {string} marketId
 * @param {string} prefix
 * @param {number} end
 * @param {number} count
 */
export async function loadMinuteWalk(db, marketId, prefix, end, count) {
  await db.query(
    `INSERT INTO market_trades (trade_id, market_id, outcome_index, price, shares, buyer, seller, at)
     SELECT $4::text || g, $1, g % 2, 1000 + (hashint4(g) & 8191) % 8000, 1 + (hashint4(g + 7) & 1048575),
            'So11111111111111111111111111111111111111112', 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
            $2::timestamptz - make_interval(mins => g)
       FROM generate_series(1, $3::int) AS g`,
    [marketId, new Date(end).toISOString(), count, prefix],
  );
}

/**
 * A bulk-loaded market's candles (market_candles) from its trades, by the aggregate of the
 * market-data migration's backfill (src/db/migrations/0030_market_data.sql): what ingestion's
 * candle upkeep would have written, trade by trade.
 * @param {import('../dist/db/database.js').Queryable} db
 * @param {string} marketId
 */
export async function buildCandles(db, marketId) {
  await db.query(
    `INSERT INTO market_candles (market_id, outcome_index, width, bucket, open, high, low, close, volume, trades,
                                 open_at, open_trade, close_at, close_trade)
     SELECT t.market_id, t.outcome_index, w.width,
            date_bin(make_interval(secs => w.width), t.at, timestamptz '1970-01-01 00:00:00+00') AS bucket,
            (array_agg(t.price ORDER BY t.at, t.trade_id))[1], max(t.price), min(t.price),
            (array_agg(t.price ORDER BY t.at DESC, t.trade_id DESC))[1], sum(t.shares), count(*),
            min(t.at), (array_agg(t.trade_id ORDER BY t.at, t.trade_id))[1],
            max(t.at), (array_agg(t.trade_id ORDER BY t.at DESC, t.trade_id DESC))[1]
       FROM market_trades t CROSS JOIN (VALUES (60), (3600), (86400)) AS w (width)
      WHERE t.market_id = $1
      GROUP BY t.market_id, t.outcome_index, w.width, bucket`,
    [marketId],
  );
}

/**
 * Each outcome's last trade (market_outcome_last) from the bulk-loaded trades, by the migration's
 * backfill (src/db/migrations/0037_market_outcome_last.sql): what ingestion would have kept.
 * @param {import('../dist/db/database.js').Queryable} db
 */
export async function buildLastTrades(db) {
  await db.query(
    `INSERT INTO market_outcome_last (market_id, outcome_index, price, at, trade_id)
     SELECT o.market_id, o.outcome_index, t.price, t.at, t.trade_id
       FROM market_outcomes o
       CROSS JOIN LATERAL (
         SELECT x.price, x.at, x.trade_id FROM market_trades x
          WHERE x.market_id = o.market_id AND x.outcome_index = o.outcome_index
          ORDER BY x.at DESC, x.trade_id DESC LIMIT 1
       ) t
      ORDER BY o.market_id, o.outcome_index
         ON CONFLICT (market_id, outcome_index) DO UPDATE
        SET price = excluded.price, at = excluded.at, trade_id = excluded.trade_id`,
  );
}
