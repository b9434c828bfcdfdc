// The `fanout` scenario of `npm run bench:webhooks` (bench/webhooks.js): account events at volume.
// One live account with 3 registered endpoints (all on the loopback receiver, subscribed to
// `deposit.credited`); 1,000 USDC deposits from its wallet booked and written by the watcher's own
// crediting path (`book`, then `writeChunk`: the ledger's batch credit, the deposit rows and one
// `deposit.credited` per deposit with a delivery per endpoint, all in one transaction, as a watcher
// poll writes a chunk) — 3,000 deliveries committed at once, sent by the one `sibyl work`. Measured:
// commit → the receiver's request, p50/p99 over the 3,000, and commit → the first and the last one;
// the crediting transaction's own time; the worker's and PostgreSQL's CPU per delivery meanwhile.
import { createAccount } from '../dist/accounts/accounts.js';
import { createContext } from '../dist/context.js';
import { book } from '../dist/deposits/book.js';
import { fixedDepositPrices } from '../dist/deposits/prices.js';
import { writeChunk } from '../dist/deposits/unreadable.js';
import { systemClock } from '../dist/lib/clock.js';
import { silentLog } from '../dist/logger.js';
import { createEndpoint } from '../dist/webhooks/endpoints.js';
import { clearSecretBox } from '../dist/webhooks/secret-box.js';
import {
  cpuSecondsSince,
  postgresCpuSeconds,
  postgresCpuSince,
  processCpuSeconds,
  randomMint,
} from './lib.js';

const DEPOSITS = Number(process.env.BENCH_FANOUT_DEPOSITS ?? 1000);
const ENDPOINTS = 3;

/** A random transaction signature: base58 of 64 bytes, as the chain writes them. */
const signature = () => `${randomMint()}${randomMint()}`.slice(0, 88);

/**
 * @param {import('../dist/db/database.js').Database} db
 * @param {{ url: string, arrivals: Map<string, number> }} rx
 * @param {(condition: () => boolean, what: string, timeoutMs?: number) => Promise<void>} waitFor
 * @param {{ pid?: number }} worker
 * @returns {Promise<[string, string][]>} the table's rows
 */
export async function fanoutScenario(db, rx, waitFor, worker) {
  const ctx = createContext(db, systemClock);
  const wallet = randomMint();
  const account = await createAccount(ctx, { mode: 'live', walletAddress: wallet }, clearSecretBox);
  for (let i = 0; i < ENDPOINTS; i++) {
    await createEndpoint(
      ctx,
      clearSecretBox,
      { allowPrivateTargets: true },
      { accountId: account.id, mode: 'live', url: `${rx.url}/fanout-${i}`, eventTypes: ['deposit.credited'] },
    );
  }
  const blockTime = Math.floor(Date.now() / 1000);
  /** @type {import('../dist/deposits/deposits.js').Deposit[]} */
  const deposits = Array.from({ length: DEPOSITS }, (_, i) => {
    const sig = signature();
    return {
      reference: `sol:${sig}:0`,
      signature: sig,
      instruction: '0',
      asset: 'USDC',
      amount: 1_000_000n + BigInt(i),
      decimals: 6,
      sender: wallet,
      sourceOwner: wallet,
      accounts: [],
      slot: 300_000_000 + i,
      blockTime,
    };
  });
  const booked = await book(
    createContext(db, systemClock),
    fixedDepositPrices({ SOL: 150, USDC: 1 }),
    1_000_000n,
    deposits,
  );
  if (booked.some((b) => b.status !== 'credited')) throw new Error('a bench deposit was not attributed');

  const before = rx.arrivals.size;
  const workerCpu = processCpuSeconds(worker.pid);
  const postgresCpu = postgresCpuSeconds();
  // The receiver runs in this process: its CPU is this process's while it waits.
  let receiverCpu = process.cpuUsage();
  const started = Date.now();
  const outcome = await writeChunk(
    { db, clock: systemClock, log: silentLog },
    { booked, unreadable: [], readable: deposits.map((d) => d.signature) },
  );
  const committed = Date.now();
  receiverCpu = process.cpuUsage();
  if (outcome.written.length !== DEPOSITS) throw new Error(`wrote ${outcome.written.length} deposits`);
  const expected = DEPOSITS * ENDPOINTS;
  await waitFor(() => rx.arrivals.size >= before + expected, 'the fanned-out deliveries', 600_000);
  const workerSeconds = cpuSecondsSince(worker.pid, workerCpu);
  const postgresSeconds = postgresCpuSince(postgresCpu, postgresCpuSeconds());
  const received = process.cpuUsage(receiverCpu);
  const receiverSeconds = (received.user + received.system) / 1e6;
  /** @type {{ id: string }[]} */
  const ids = await db.query(
    `SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
      WHERE e.account_id = $1`,
    [account.id],
  );
  if (ids.length !== expected) throw new Error(`${ids.length} deliveries, not ${expected}`);
  const latencies = ids.map((row) => /** @type {number} */ (rx.arrivals.get(row.id)) - committed);
  latencies.sort((a, b) => a - b);
  const at = (/** @type {number} */ p) =>
    latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)];
  const label = `${DEPOSITS} deposits × ${ENDPOINTS} endpoints, one transaction`;
  const perDelivery = (/** @type {number | null} */ seconds) =>
    seconds === null ? '—' : `${((seconds * 1e6) / expected).toFixed(0)} µs`;
  const last = /** @type {number} */ (latencies[latencies.length - 1]);
  return [
    [
      `fan-out: the crediting transaction (${DEPOSITS} credits, events, ${expected} deliveries)`,
      `${committed - started} ms`,
    ],
    [`fan-out commit → receiver, p50 (${label})`, `${at(50)} ms`],
    [`fan-out commit → receiver, p99 (${label})`, `${at(99)} ms`],
    ['fan-out commit → first delivery', `${latencies[0]} ms`],
    [`fan-out commit → last of ${expected} deliveries`, `${last} ms`],
    ['fan-out deliveries/s (commit → last)', ((expected * 1000) / last).toFixed(0)],
    ['fan-out worker CPU per delivery', perDelivery(workerSeconds)],
    [
      'fan-out worker busy (its CPU / commit → last)',
      workerSeconds === null ? '—' : `${((workerSeconds * 100_000) / last).toFixed(0)} %`,
    ],
    [
      'fan-out PostgreSQL CPU per delivery (every backend on the machine; the crediting transaction too)',
      perDelivery(postgresSeconds),
    ],
    ['fan-out receiver CPU per delivery (HTTPS server, this process)', perDelivery(receiverSeconds)],
  ];
}
