import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { usingPostgres } from '../helpers/db.js';
import { type HttpsReceiver, startHttpsReceiver, testCertificate } from '../helpers/https-receiver.js';
import { countEntries, expectLedgerReconciles } from '../helpers/ledger.js';
import { type ServiceProcess, startService } from '../helpers/process.js';

/**
 * Many price checks due in one second across two real `sibyl work` processes, one killed with
 * SIGKILL in the middle of that second (docs/jobs.md#claims). N is 1,000 rather than 10,000 so that
 * scheduling them through the API stays within a test's time; the workers' claims and batches are
 * made small (100 a claim, 1,000 held) so that many claims, claimed-ahead jobs and running batches
 * are in play at the kill, as with 10,000 and the defaults. Every job completes once, is charged
 * once, refunded never (none fails), and called back once (a real HTTPS receiver counts the
 * callbacks); the jobs the killed worker had claimed ahead, never started, are taken back after
 * their lease without counting a run.
 */

const N = 1000;
const LEASE_MS = 2000;

let ctx: TestContext;
let receiver: HttpsReceiver;
let caFile = '';
const workers: ServiceProcess[] = [];

beforeAll(async () => {
  if (!usingPostgres) return;
  ctx = await createTestContext({ config: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  receiver = await startHttpsReceiver();
  caFile = join(mkdtempSync(join(tmpdir(), 'sibyl-ca-')), 'ca.pem');
  writeFileSync(caFile, (await testCertificate()).cert);
});
afterAll(async () => {
  for (const worker of workers) await worker.kill();
  if (!usingPostgres) return;
  await receiver.close();
  await ctx.close();
});

async function work(): Promise<ServiceProcess> {
  const worker = await startService(
    'work',
    {
      DATABASE_URL: ctx.database.location,
      DB_POOL_SIZE: '4',
      NODE_EXTRA_CA_CERTS: caFile,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      JOB_PRICE_LEASE_MS: String(LEASE_MS),
      JOB_PRICE_CLAIM_SIZE: '100',
      JOB_PRICE_HELD: '1000',
      JOB_CLAIM_AHEAD_MS: '2000',
      LOG_LEVEL: 'info',
    },
    // Up once its every queue is: src/server.ts logs this after the worker started the last one.
    async (output) => output.includes('"msg":"worker started"'),
  );
  workers.push(worker);
  return worker;
}

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 600_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface Row {
  id: string;
  status: string;
  attempts: number;
  has_result: boolean;
  late_ms: number;
}

async function count(where: string): Promise<number> {
  const [row] = await ctx.database.db.query<{ n: bigint }>(
    `SELECT count(*) AS n FROM scheduled_jobs WHERE job_type = 'PRICE_RESOLUTION' AND ${where}`,
  );
  return Number(row?.n);
}

/** Connections of this database that LISTEN (one a worker process: its queues' notifications). */
async function listeners(): Promise<number> {
  const [row] = await ctx.database.db.query<{ n: bigint }>(
    `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'`,
  );
  return Number(row?.n);
}

describe.runIf(usingPostgres)('a second of many price checks, a worker killed in it (PostgreSQL)', () => {
  it(`${N} due in one second, one of two workers SIGKILLed mid-second: each completes, is charged and called back once`, async () => {
    const account = await ctx.createAccount({ balanceUsd: '1000.00' });
    ctx.clock.set(new Date());
    // Scheduled through the API for later, then brought to one second a few seconds ahead: the
    // scheduling takes longer than the lead a second of jobs is given.
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const ids: string[] = [];
    for (let i = 0; i < N; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: 50 }, () =>
          ctx.request(account.key, {
            method: 'POST',
            url: '/api/v1/price/schedule',
            payload: { symbol: 'SOL', resolutionTimestamp: later, callbackUrl: `${receiver.url}/jobs` },
          }),
        ),
      );
      for (const response of batch) {
        expect(response.statusCode).toBe(200);
        ids.push(response.json().jobId);
      }
    }
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(N);
    // Both workers up first (nothing due for an hour), then the jobs brought to one second a few
    // seconds ahead, and the workers woken, as scheduling them would.

    const before = await listeners();
    const [doomed] = await Promise.all([work(), work()]);
    await until(async () => (await listeners()) >= before + 2, 'both workers listening');
    const second = new Date(Math.ceil((Date.now() + 5000) / 1000) * 1000);
    await ctx.database.db.query(
      `UPDATE scheduled_jobs SET scheduled_for = $2::timestamptz + (row_number * interval '1 millisecond')
         FROM (SELECT id AS numbered, (row_number() OVER (ORDER BY id)) % 1000 AS row_number
                 FROM scheduled_jobs WHERE id = ANY($1::text[])) n
        WHERE id = numbered`,
      [ids, second],
    );
    await ctx.database.db.query(`SELECT pg_notify('scheduled_jobs', '')`);
    // In the second: some done, others running, others claimed ahead and waiting for their time.
    let waiting: { id: string }[] = [];
    await until(async () => {
      if ((await count(`status = 'COMPLETED'`)) < 100) return false;
      waiting = await ctx.database.db.query<{ id: string }>(
        `SELECT id FROM scheduled_jobs WHERE status = 'PROCESSING' AND started_at IS NULL AND id = ANY($1::text[])`,
        [ids],
      );
      return waiting.length > 0;
    }, 'jobs done while others wait for their time');
    await doomed?.kill();

    await until(async () => (await count(`status = 'COMPLETED'`)) === N, 'all jobs');
    await until(
      async () => new Set(receiver.received.map((r) => r.headers['webhook-id'])).size >= N,
      'every callback',
    );
    const rows = await ctx.database.db.query<Row>(
      `SELECT id, status, attempts, result IS NOT NULL AS has_result,
              extract(epoch FROM started_at - scheduled_for) * 1000 AS late_ms
         FROM scheduled_jobs WHERE id = ANY($1::text[])`,
      [ids],
    );
    expect(rows.filter((job) => job.status !== 'COMPLETED' || !job.has_result)).toEqual([]);
    // None started early; a run counts only when started: at most the killed one and the one that
    // finished it.
    expect(rows.filter((job) => Number(job.late_ms) < 0)).toEqual([]);
    expect(rows.filter((job) => job.attempts < 1 || job.attempts > 2)).toEqual([]);
    // The claimed-ahead jobs the killed worker held were taken back after their lease, their one run
    // counted once: started at least a lease after their time (the survivor's own started on time).
    const byId = new Map(rows.map((job) => [job.id, job]));
    const retaken = waiting
      .map(({ id }) => byId.get(id) as Row)
      .filter((job) => Number(job.late_ms) >= LEASE_MS);
    expect(retaken.length).toBeGreaterThan(0);
    expect(retaken.filter((job) => job.attempts !== 1)).toEqual([]);

    // Charged once, never refunded (none failed), called back once each: one delivery (webhook-id)
    // per job, the callback naming it.
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(N);
    expect(await countEntries(ctx.database.db, account.accountId, 'refund')).toBe(0);
    const deliveries = new Map<string, Set<string>>();
    for (const request of receiver.received) {
      const jobId = (JSON.parse(request.body) as { data: { jobId: string } }).data.jobId;
      const seen = deliveries.get(jobId) ?? new Set<string>();
      seen.add(String(request.headers['webhook-id']));
      deliveries.set(jobId, seen);
    }
    expect([...deliveries.keys()].sort()).toEqual([...ids].sort());
    expect([...deliveries.values()].filter((seen) => seen.size !== 1)).toEqual([]);
    const [outbox] = await ctx.database.db.query<{ jobs: bigint }>(
      `SELECT count(DISTINCT delivery_id) AS jobs FROM scheduled_jobs WHERE id = ANY($1::text[])`,
      [ids],
    );
    expect(Number(outbox?.jobs)).toBe(N);
    await expectLedgerReconciles(ctx.database.db);
  }, 900_000);
});
