import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createResolver } from '../../src/ai/resolver.js';
import { aiJobResolver } from '../../src/jobs/ai.js';
import { webhookOutbox } from '../../src/webhooks/outbox.js';
import { CALLBACKS_VIEW } from '../helpers/callbacks.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { usingPostgres } from '../helpers/db.js';
import { type FakeServer, startFakeServer } from '../helpers/fake-server.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';
import { type ServiceProcess, startService } from '../helpers/process.js';

/**
 * Scheduled jobs across real worker processes on one PostgreSQL database: two workers racing for
 * 500 due jobs run each once; a worker killed with SIGKILL mid-job leaves it to another, which
 * finishes it once after the lease; a job whose run kills its worker every time is FAILED after its
 * last run, refunded once and called back once. (Several processes on one database: PostgreSQL only.)
 */

let ctx: TestContext;
const workers: ServiceProcess[] = [];

beforeAll(async () => {
  if (!usingPostgres) return;
  ctx = await createTestContext({ config: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  await ctx.database.db.exec(CALLBACKS_VIEW);
});
afterAll(async () => {
  for (const worker of workers) await worker.kill();
  if (!usingPostgres) return;
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

async function work(env: Record<string, string> = {}): Promise<ServiceProcess> {
  const worker = await startService(
    'work',
    { DATABASE_URL: ctx.database.location, DB_POOL_SIZE: '4', ...env },
    async () => true,
  );
  workers.push(worker);
  return worker;
}

async function statuses(ids: string[]) {
  return ctx.database.db.query<{ id: string; status: string; attempts: number; has_result: boolean }>(
    'SELECT id, status, attempts, result IS NOT NULL AS has_result FROM scheduled_jobs WHERE id = ANY($1::text[])',
    [ids],
  );
}

async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 50));
}

describe.runIf(usingPostgres)('scheduled jobs across worker processes (PostgreSQL)', () => {
  it('two workers racing for 500 due jobs run each exactly once', async () => {
    const account = await ctx.createAccount({ balanceUsd: '100.00' });
    ctx.clock.set(new Date());
    const due = new Date(Date.now() + 3000).toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 500; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: 50 }, () =>
          ctx.request(account.key, {
            method: 'POST',
            url: '/api/v1/price/scheduled',
            payload: { symbol: ['SOL', 'BTC', 'ETH'][i % 3], scheduledFor: due },
          }),
        ),
      );
      for (const response of batch) ids.push(response.json().jobId);
    }
    expect(new Set(ids).size).toBe(500);
    const racing = await Promise.all([work(), work()]);
    await until(async () => (await statuses(ids)).every((job) => job.status === 'COMPLETED'));
    for (const worker of racing) await worker.kill();
    const done = await statuses(ids);
    expect(done.filter((job) => job.attempts !== 1)).toEqual([]);
    expect(done.every((job) => job.has_result)).toBe(true);
  });

  it('a worker killed mid-job leaves it to another, which finishes it once after the lease', async () => {
    const account = await ctx.createAccount({ mode: 'live', balanceUsd: '1.00' });
    let calls = 0;
    let hang = true;
    const venue: FakeServer = await startFakeServer(() => {
      calls++;
      if (hang) return { delayMs: 60_000, body: {} };
      return {
        body: {
          symbol: 'SOLUSDT',
          lastPrice: '187.25',
          quoteVolume: '250000000.00',
          closeTime: Date.now(),
        },
      };
    });
    try {
      ctx.clock.set(new Date());
      const response = await ctx.request(account.key, {
        method: 'POST',
        url: '/api/v1/price/scheduled',
        payload: { symbol: 'SOL', scheduledFor: new Date(Date.now() + 500).toISOString() },
      });
      const id = response.json().jobId;
      const env = {
        PRICE_VENUES: 'binance',
        BINANCE_BASE_URL: venue.url,
        PRICE_VENUE_TIMEOUT_MS: '120000',
        PRICE_MIN_SOURCES: '1',
        JOB_PRICE_LEASE_MS: '2000',
      };
      const doomed = await work(env);
      await until(async () => calls > 0);
      expect((await statuses([id]))[0]).toMatchObject({ status: 'PROCESSING', attempts: 1 });
      await doomed.kill();
      hang = false;
      await work(env);
      await until(async () => (await statuses([id]))[0]?.status === 'COMPLETED');
      const [row] = await ctx.database.db.query<{ attempts: number; result: { vwapPrice: number } }>(
        'SELECT attempts, result FROM scheduled_jobs WHERE id = $1',
        [id],
      );
      expect(row?.attempts).toBe(2);
      expect(row?.result.vwapPrice).toBe(187.25);
    } finally {
      await venue.close();
    }
  });
  it('a job whose run kills its worker every time: FAILED after its 5 runs, refunded once, called back once', async () => {
    for (const worker of workers.splice(0)) await worker.kill();
    const account = await ctx.createAccount({ mode: 'live', balanceUsd: '1.00' });
    let current: ServiceProcess | undefined;
    // A venue whose every answer takes the asking worker down: SIGKILL while the quote is awaited.
    const venue: FakeServer = await startFakeServer(() => {
      void current?.kill();
      return { delayMs: 60_000, body: {} };
    });
    try {
      ctx.clock.set(new Date());
      const response = await ctx.request(account.key, {
        method: 'POST',
        url: '/api/v1/price/schedule',
        payload: {
          symbol: 'SOL',
          resolutionTimestamp: new Date(Date.now() + 500).toISOString(),
          // A host nothing resolves publicly: accepted here (private targets allowed in this
          // file's API), never connected to by the workers (theirs are not): no network needed.
          callbackUrl: 'https://receiver.test/sibyl',
        },
      });
      expect(response.statusCode).toBe(200);
      const id = response.json().jobId as string;
      const env = {
        PRICE_VENUES: 'binance',
        BINANCE_BASE_URL: venue.url,
        PRICE_VENUE_TIMEOUT_MS: '120000',
        PRICE_MIN_SOURCES: '1',
        JOB_PRICE_LEASE_MS: '1000',
      };
      const exited = (worker: ServiceProcess) => async () =>
        worker.child.exitCode !== null || worker.child.signalCode !== null;
      for (let run = 1; run <= 5; run++) {
        const worker = await work(env);
        current = worker;
        await until(exited(worker)); // killed by the venue mid-run
        expect((await statuses([id]))[0]).toMatchObject({ status: 'PROCESSING', attempts: run });
      }
      const asked = venue.requests.length;
      current = await work(env);
      await until(async () => (await statuses([id]))[0]?.status === 'FAILED');
      await current.kill();
      expect(venue.requests.length).toBe(asked); // the sixth claim did not run it
      const [job] = await ctx.database.db.query<{ attempts: number; error: unknown }>(
        'SELECT attempts, error FROM scheduled_jobs WHERE id = $1',
        [id],
      );
      expect(job).toEqual({
        attempts: 6,
        error: { code: 'INTERNAL_ERROR', message: 'The job could not be run; it was refunded' },
      });
      expect(await balanceOf(ctx.database.db, account.accountId)).toBe(1_000_000n);
      expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(1);
      expect(await countEntries(ctx.database.db, account.accountId, 'refund')).toBe(1);
      const calledBack = await ctx.database.db.query<{ status: string; data: Record<string, unknown> }>(
        'SELECT status, data FROM test_recorded_callbacks WHERE account_id = $1',
        [account.accountId],
      );
      expect(calledBack).toEqual([
        {
          status: 'failed',
          data: {
            jobId: id,
            jobType: 'PRICE_RESOLUTION',
            error: { code: 'INTERNAL_ERROR', message: 'The job could not be run; it was refunded' },
            refundUsd: expect.any(String),
            remainingBalanceUsd: '1.00',
          },
        },
      ]);
      await expectLedgerReconciles(ctx.database.db);
    } finally {
      await venue.close();
    }
  }, 300_000); // six worker starts and five lapsed leases, in real time

  it('a harmless job claimed in one batch with a job whose run kills its worker completes; only the poison one fails', async () => {
    for (const worker of workers.splice(0)) await worker.kill();
    const account = await ctx.createAccount({ mode: 'live', balanceUsd: '1.00' });
    let current: ServiceProcess | undefined;
    // BTC's quote takes the asking worker down (SIGKILL while it is awaited); SOL's comes a moment
    // later, so that in a batch with BTC the SOL check is still in flight when its worker dies.
    const venue: FakeServer = await startFakeServer((request) => {
      const symbol = request.url.searchParams.get('symbol') ?? '';
      if (symbol.startsWith('BTC')) {
        void current?.kill();
        return { delayMs: 60_000, body: {} };
      }
      return {
        delayMs: 300,
        body: { symbol, lastPrice: '187.25', quoteVolume: '250000000.00', closeTime: Date.now() },
      };
    });
    try {
      ctx.clock.set(new Date());
      const scheduledFor = new Date(Date.now() + 1000).toISOString();
      const [poison, harmless] = await Promise.all(
        ['BTC', 'SOL'].map(async (symbol) => {
          const response = await ctx.request(account.key, {
            method: 'POST',
            url: '/api/v1/price/scheduled',
            payload: { symbol, scheduledFor },
          });
          expect(response.statusCode).toBe(200);
          return response.json().jobId as string;
        }),
      );
      const ids = [poison as string, harmless as string];
      const env = {
        PRICE_VENUES: 'binance',
        BINANCE_BASE_URL: venue.url,
        PRICE_VENUE_TIMEOUT_MS: '120000',
        PRICE_MIN_SOURCES: '1',
        JOB_PRICE_LEASE_MS: '1000',
        JOB_MAX_ATTEMPTS: '3',
      };
      const final = async () =>
        (await statuses(ids)).every((job) => job.status === 'COMPLETED' || job.status === 'FAILED');
      // The first worker claims both in one batch (due together) and dies of BTC mid-batch.
      current = await work(env);
      await until(async () => current?.child.signalCode !== null);
      expect((await statuses(ids)).map((job) => [job.status, job.attempts])).toEqual([
        ['PROCESSING', 1],
        ['PROCESSING', 1],
      ]);
      for (let started = 1; !(await final()); started++) {
        expect(started).toBeLessThan(6); // three runs of BTC, one of SOL, one that ends BTC
        const worker = await work(env);
        current = worker;
        await until(async () => worker.child.signalCode !== null || (await final()));
      }
      await current?.kill();
      const byId = new Map((await statuses(ids)).map((job) => [job.id, job]));
      expect(byId.get(harmless as string)).toMatchObject({
        status: 'COMPLETED',
        attempts: 2,
        has_result: true,
      });
      expect(byId.get(poison as string)).toMatchObject({ status: 'FAILED', attempts: 4 });
      expect(await countEntries(ctx.database.db, account.accountId, 'refund')).toBe(1);
      await expectLedgerReconciles(ctx.database.db);
    } finally {
      await venue.close();
    }
  }, 300_000);
});

describe.runIf(usingPostgres)('a cancel racing the claim (PostgreSQL)', () => {
  it('each job ends cancelled and refunded, or run — never both, never refunded twice', async () => {
    const { PostgresDatabase } = await import('../../src/db/postgres.js');
    const { ManualClock } = await import('../../src/lib/clock.js');
    const { WorkQueue } = await import('../../src/queue/queue.js');
    const { jobQueueHandler } = await import('../../src/jobs/runner.js');
    const { createPriceService } = await import('../../src/prices/index.js');
    const { silentLog } = await import('../../src/logger.js');
    const account = await ctx.createAccount({ balanceUsd: '100.00' });
    const workerDb = new PostgresDatabase(ctx.database.location, { poolSize: 8 });
    try {
      for (let round = 0; round < 5; round++) {
        const due = new Date(Date.now() + 3_600_000 * (round + 1));
        ctx.clock.set(new Date(due.getTime() - 600_000));
        const ids = await Promise.all(
          Array.from({ length: 60 }, async () => {
            const r = await ctx.request(account.key, {
              method: 'POST',
              url: '/api/v1/price/scheduled',
              payload: { symbol: 'SOL', scheduledFor: due.toISOString() },
            });
            return r.json().jobId as string;
          }),
        );
        // The canceller's clock is still before the cut-off; the worker's has reached the due time.
        ctx.clock.set(new Date(due.getTime() - 300_000));
        const workerClock = new ManualClock(due);
        const deps = { db: workerDb, clock: workerClock, log: silentLog, settings: ctx.config.jobs };
        const queue = new WorkQueue(
          jobQueueHandler({
            ...deps,
            prices: createPriceService(ctx.config.prices, workerClock, []),
            callbacks: webhookOutbox,
            ai: aiJobResolver(createResolver(ctx.config.ai, workerClock)),
          }),
          deps,
        );
        const [cancels] = await Promise.all([
          Promise.all(
            ids.map((id) =>
              ctx.request(account.key, { method: 'POST', url: `/api/v1/price/scheduled/${id}/cancel` }),
            ),
          ),
          queue.drain(),
        ]);
        const rows = await ctx.database.db.query<{ id: string; status: string; refunds: bigint }>(
          `SELECT j.id, j.status, (SELECT count(*) FROM ledger_entries r WHERE r.refund_of = j.charge_entry_id) AS refunds
             FROM scheduled_jobs j WHERE j.id = ANY($1::text[])`,
          [ids],
        );
        const byId = new Map(rows.map((r) => [r.id, r]));
        ids.forEach((id, i) => {
          const row = byId.get(id);
          const answer = cancels[i]?.statusCode;
          if (row?.status === 'CANCELLED') {
            expect({ id, answer, refunds: row.refunds }).toEqual({ id, answer: 200, refunds: 1n });
          } else {
            expect({ id, status: row?.status, answer, refunds: row?.refunds }).toEqual({
              id,
              status: 'COMPLETED',
              answer: 409,
              refunds: 0n,
            });
          }
        });
      }
      await expectLedgerReconciles(ctx.database.db);
    } finally {
      await workerDb.close();
    }
  });
});
