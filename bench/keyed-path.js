// CPU per call of what an Idempotency-Key adds to the 50-symbol batch price
// (docs/performance.md#what-a-key-costs): each step timed with
// process.cpuUsage over many iterations of the exact functions, on a real answer — an in-process
// app (embedded PGlite) answers one batch of the benchmark's 50 symbols (10 listed tokens, 40
// unknown mints), and its route's own serializer renders it. End-to-end rates on the shared machine
// cannot show a change of 10 µs; this can.
//
//   npm run build && node bench/keyed-path.js [iterations per step, default 20000]
//
// KEYED_PATH_BASELINE=<another build's dist directory> times that build's fingerprint and pending
// answer too, in the same turns: a before/after pair measured side by side in one process.
// KEYED_PATH_ONLY=<a step's name> runs that step alone, ITERATIONS times (for `node --cpu-prof`).
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../dist/app.js';
import { loadConfig } from '../dist/config.js';
import { migrate } from '../dist/db/migrate.js';
import { PgliteDatabase } from '../dist/db/pglite.js';
import { createSandboxStarter } from '../dist/first-start.js';
import { billed } from '../dist/gate/billing/request.js';
import { fingerprint } from '../dist/idempotency/idempotency.js';
import { pendingAnswer } from '../dist/idempotency/pending-answer.js';
import { systemClock } from '../dist/lib/clock.js';
import { clearSecretBox } from '../dist/webhooks/secret-box.js';
import { median, randomMint } from './lib.js';

const ITERATIONS = Number(process.argv[2] ?? 20_000);
const CHUNK = 500;
const SYMBOLS = [
  ...['SOL', 'BTC', 'ETH', 'USDC', 'USDT', 'BONK', 'JUP', 'RAY', 'ORCA', 'PYTH'],
  ...Array.from({ length: 40 }, randomMint),
];

/** A real answer of the batch route, and the route's reply (whose `serialize` is the route's serializer). */
async function capture() {
  const dir = mkdtempSync(join(tmpdir(), 'sibyl-bench-'));
  const { db } = await PgliteDatabase.open(join(dir, 'data'));
  try {
    await migrate(db);
    const starter = await createSandboxStarter(db, systemClock, clearSecretBox);
    const config = loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_BURST: '1000000' });
    /** @type {import('fastify').FastifyReply | undefined} */
    let reply;
    const app = await buildApp({
      config,
      db,
      clock: systemClock,
      secrets: clearSecretBox,
      extraRoutes: (a) =>
        a.addHook('onRequest', (_request, r, done) => {
          reply = r;
          done();
        }),
    });
    await app.ready();
    try {
      const response = await app.inject({
        method: 'POST',
        url: '/api/v1/price/batch',
        headers: {
          authorization: `Bearer ${starter.key.key}`,
          'content-type': 'application/json',
          'idempotency-key': 'bench-keyed-path',
        },
        payload: JSON.stringify({ symbols: SYMBOLS }),
      });
      if (response.statusCode !== 200) throw new Error(`${response.statusCode} ${response.body}`);
      if (!reply) throw new Error('the batch route was not reached');
      return { body: response.body, reply };
    } finally {
      await app.close();
    }
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * µs of CPU per call of each step, in every turn: the steps take turns, CHUNK calls at a time, so
 * that a change in the machine's load falls on all of them alike.
 */
function cpuPerCall(steps) {
  const rounds = Math.ceil(ITERATIONS / CHUNK);
  const samples = steps.map(() => []);
  for (let round = -2; round < rounds; round++) {
    steps.forEach(([, fn], s) => {
      const start = process.cpuUsage();
      for (let i = 0; i < CHUNK; i++) fn(i);
      const used = process.cpuUsage(start);
      if (round >= 0) samples[s].push((used.user + used.system) / CHUNK);
    });
  }
  return samples;
}

const { body, reply } = await capture();
const sent = JSON.parse(body);
const { requestId, costUsd: _cost, remainingBalanceUsd: _balance, ...result } = sent;
const request = { symbols: SYMBOLS };
const amount = 550_000n;
const balance = 9_999_450_000n;
/** The route's serializer, as `runKeyed` calls it (it answers a string). @param {bigint} balanceMicros */
const serialise = (balanceMicros) =>
  /** @type {string} */ (reply.serialize(billed(requestId, result, amount, balanceMicros)));
const key = { idempotencyKey: 'bench-key', fingerprint: 'f'.repeat(64), createdAt: new Date() };

let sink = 0;
/** @type {[string, (i: number) => unknown][]} */
const steps = [
  // What both paths do: the route's serializer, and the bytes a socket write makes of its string.
  ['serialise', () => (sink += serialise(balance).length)],
  ['serialise + encode, as sent unkeyed', () => (sink += Buffer.from(serialise(balance)).length)],
  // What a key adds.
  ['fingerprint of the request', () => (sink += fingerprint('POST', '/api/v1/price/batch', request).length)],
  [
    'pendingAnswer + bytes, as sent keyed',
    () => (sink += pendingAnswer(key, serialise).bytes(balance).length),
  ],
];
const baseline = process.env.KEYED_PATH_BASELINE;
if (baseline) {
  const before = {
    ...(await import(join(baseline, 'idempotency/idempotency.js'))),
    ...(await import(join(baseline, 'idempotency/pending-answer.js'))),
  };
  steps.push(
    [
      'baseline: fingerprint',
      () => (sink += before.fingerprint('POST', '/api/v1/price/batch', request).length),
    ],
    [
      'baseline: pendingAnswer + bytes',
      () => (sink += before.pendingAnswer(key, serialise).bytes(balance).length),
    ],
  );
}

const only = process.env.KEYED_PATH_ONLY;
if (only) {
  const [, fn] = steps.find(([name]) => name === only) ?? [];
  if (!fn) throw new Error(`no step named ${only}`);
  for (let i = 0; i < ITERATIONS; i++) fn(i);
  process.exit(0);
}
console.log(
  `${new Date().toISOString()}, load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}, answer ${Buffer.byteLength(body)} bytes, ${ITERATIONS} calls a step in turns of ${CHUNK}`,
);
const samples = cpuPerCall(steps);
const row = (name, value) => console.log(`${name.padEnd(52)} ${value.toFixed(2).padStart(7)} µs`);
for (const [i, [name]] of steps.entries()) row(`${name} (median of the turns)`, median(samples[i]));
// The answer's share of what a key adds: the keyed answer less the unkeyed one, turn by turn.
const added = (i) => median(samples[i].map((us, turn) => us - samples[1][turn]));
row('a key adds to the answer (paired by turn)', added(3));
if (baseline) row('baseline: a key adds to the answer (paired by turn)', added(5));
if (sink === 0) console.log('');
