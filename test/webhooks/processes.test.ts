import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext, withTransaction } from '../../src/context.js';
import { MAX_ATTEMPTS, webhookOutbox } from '../../src/webhooks/outbox.js';
import { ABANDONED_ERROR } from '../../src/webhooks/sql.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { usingPostgres } from '../helpers/db.js';
import { type HttpsReceiver, startHttpsReceiver, testCertificate } from '../helpers/https-receiver.js';
import { type ServiceProcess, startService } from '../helpers/process.js';

/**
 * Webhook deliveries across real `sibyl work` processes on one PostgreSQL database, to a real HTTPS
 * receiver: two workers deliver 1,000 callbacks, each exactly once; a worker killed with SIGKILL
 * mid-attempt leaves the delivery to another, which sends it again with the same webhook-id (killed
 * mid-batch, only the attempts it had not recorded); a receiver that kills the worker on every
 * attempt gets 8 attempts, then the delivery is CALLBACK_FAILED (abandoned) and never sent again.
 */

let ctx: TestContext;
let receiver: HttpsReceiver;
let caFile = '';
const workers: ServiceProcess[] = [];

beforeAll(async () => {
  if (!usingPostgres) return;
  ctx = await createTestContext();
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

async function work(env: Record<string, string> = {}): Promise<ServiceProcess> {
  const worker = await startService(
    'work',
    {
      DATABASE_URL: ctx.database.location,
      DB_POOL_SIZE: '4',
      NODE_EXTRA_CA_CERTS: caFile,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      ...env,
    },
    async () => true,
  );
  workers.push(worker);
  return worker;
}

async function enqueue(accountId: string, path: string, count: number): Promise<string[]> {
  const context = createContext(ctx.database.db, ctx.clock);
  return withTransaction(context, async (tx) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      ids.push(
        await webhookOutbox.enqueueCallback(tx, {
          accountId,
          url: `${receiver.url}${path}`,
          type: 'price',
          status: 'completed',
          requestId: `req_${path.slice(1)}_${i}`,
          data: { i },
        }),
      );
    }
    return ids;
  });
}

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function countDelivered(ids: string[]): Promise<number> {
  const [row] = await ctx.database.db.query<{ n: bigint }>(
    `SELECT count(*) AS n FROM webhook_deliveries WHERE id = ANY($1::text[]) AND status = 'DELIVERED'`,
    [ids],
  );
  return Number(row?.n ?? 0);
}

describe.runIf(usingPostgres)('webhook deliveries across worker processes (PostgreSQL)', () => {
  it('two workers deliver 1,000 callbacks, each exactly once', async () => {
    ctx.clock.set(new Date());
    const account = await ctx.createAccount();
    receiver.setHandler(() => 200);
    await work();
    await work();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push(...(await enqueue(account.accountId, `/many${i}`, 100)));
    await until(async () => (await countDelivered(ids)) === ids.length, '1,000 deliveries');

    const seen = receiver.received
      .filter((r) => r.url.startsWith('/many'))
      .map((r) => r.headers['webhook-id']);
    expect(seen).toHaveLength(1000);
    expect(new Set(seen)).toEqual(new Set(ids));
    const [attempts] = await ctx.database.db.query<{ n: bigint }>(
      'SELECT count(*) AS n FROM webhook_attempts WHERE delivery_id = ANY($1::text[])',
      [ids],
    );
    expect(Number(attempts?.n)).toBe(1000);
    for (const worker of workers.splice(0)) await worker.kill();
  });

  it('a worker killed mid-attempt: the delivery still arrives, with the same webhook-id', async () => {
    const account = await ctx.createAccount();
    let arrived: () => void = () => {};
    const firstArrival = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    // The first attempt is held open, never answered; later ones succeed.
    receiver.setHandler((request) => {
      if (request.url !== '/killed') return 200;
      if (receiver.received.filter((r) => r.url === '/killed').length === 1) {
        arrived();
        return 'handled';
      }
      return 200;
    });
    const env = { WEBHOOK_LEASE_MS: '2000', WEBHOOK_TIMEOUT_MS: '1000' };
    const first = await work(env);
    const [id] = await enqueue(account.accountId, '/killed', 1);
    await firstArrival;
    await first.kill(); // SIGKILL while the attempt is in flight
    await work(env);
    await until(async () => (await countDelivered([id as string])) === 1, 'the redelivery');

    const attempts = receiver.received.filter((r) => r.url === '/killed');
    expect(attempts).toHaveLength(2);
    expect(attempts.map((r) => r.headers['webhook-id'])).toEqual([id, id]);
    expect(attempts[0]?.body).toBe(attempts[1]?.body); // the same signed payload
  });

  it('a worker killed mid-batch: the attempts it recorded stand, the ones in flight are sent again', async () => {
    for (const worker of workers.splice(0)) await worker.kill();
    const account = await ctx.createAccount();
    // The first attempt to /held is held open, never answered; later ones, and /answered, get 200.
    const heldOnce = new Set<string>();
    receiver.setHandler((request) => {
      if (request.url !== '/held') return 200;
      const id = request.headers['webhook-id'] as string;
      if (heldOnce.has(id)) return 200;
      heldOnce.add(id);
      return 'handled';
    });
    const env = { WEBHOOK_LEASE_MS: '11000', WEBHOOK_TIMEOUT_MS: '10000' };
    const first = await work(env);
    const answered = await enqueue(account.accountId, '/answered', 10);
    const held = await enqueue(account.accountId, '/held', 10);
    // One claim takes all 20; the 10 answers are recorded while the 10 others are still in flight.
    await until(async () => (await countDelivered(answered)) === 10 && heldOnce.size === 10, 'the batch');
    await first.kill(); // SIGKILL, with 10 attempts in flight
    const sending = await ctx.database.db.query<{ n: bigint }>(
      `SELECT count(*) AS n FROM webhook_deliveries WHERE id = ANY($1::text[]) AND status = 'SENDING'
          AND NOT EXISTS (SELECT 1 FROM webhook_attempts a WHERE a.delivery_id = webhook_deliveries.id)`,
      [held],
    );
    expect(Number(sending[0]?.n)).toBe(10);

    await work(env);
    await until(async () => (await countDelivered(held)) === 10, 'the 10 held deliveries, sent again');
    const arrivals = (path: string) =>
      receiver.received.filter((r) => r.url === path).map((r) => r.headers['webhook-id'] as string);
    expect(arrivals('/answered').sort()).toEqual([...answered].sort()); // each once, never again
    expect(arrivals('/held').sort()).toEqual([...held, ...held].sort()); // each twice, same webhook-id
    for (const id of held) {
      const bodies = receiver.received.filter((r) => r.headers['webhook-id'] === id).map((r) => r.body);
      expect(bodies[0]).toBe(bodies[1]);
    }
    const attempts = await ctx.database.db.query<{
      delivery_id: string;
      error: string | null;
      status_code: number | null;
    }>(
      `SELECT delivery_id, error, status_code FROM webhook_attempts WHERE delivery_id = ANY($1::text[])
        ORDER BY delivery_id, attempt`,
      [[...answered, ...held]],
    );
    for (const id of answered) {
      expect(attempts.filter((a) => a.delivery_id === id)).toEqual([
        { delivery_id: id, error: null, status_code: 200 },
      ]);
    }
    for (const id of held) {
      expect(attempts.filter((a) => a.delivery_id === id)).toEqual([
        { delivery_id: id, error: ABANDONED_ERROR, status_code: null },
        { delivery_id: id, error: null, status_code: 200 },
      ]);
    }
  }, 120_000); // one lapsed lease (11 s) and the retry delay (5 s), in real time

  it('a receiver that kills the worker on every attempt: 8 attempts, then CALLBACK_FAILED, never sent again', async () => {
    for (const worker of workers.splice(0)) await worker.kill();
    const account = await ctx.createAccount();
    let current: ServiceProcess | undefined;
    receiver.setHandler((request) => {
      if (request.url !== '/kills-worker') return 200;
      void current?.kill(); // SIGKILL the worker making this attempt, while it waits for the answer
      return 'handled';
    });
    const killerAttempts = () => receiver.received.filter((r) => r.url === '/kills-worker').length;
    const recorded = async (id: string) => {
      const [row] = await ctx.database.db.query<{ n: bigint }>(
        'SELECT count(*) AS n FROM webhook_attempts WHERE delivery_id = $1',
        [id],
      );
      return Number(row?.n ?? 0);
    };
    const env = { WEBHOOK_LEASE_MS: '1000', WEBHOOK_TIMEOUT_MS: '500' };
    const [id] = (await enqueue(account.accountId, '/kills-worker', 1)) as [string];
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      current = await work(env);
      if (attempt > 1) {
        // The new worker finds the lost attempt's lease lapsed and records it as failed; the next
        // attempt is due on the retry schedule (5 s, 5 min, 30 min, …). Bring it forward, as the
        // integrator's redeliver does for a delivery still retrying.
        await until(async () => (await recorded(id)) === attempt - 1, `attempt ${attempt - 1} recorded`);
        ctx.clock.set(new Date());
        const forward = await ctx.request(account.key, {
          method: 'POST',
          url: `/api/v1/webhooks/deliveries/${id}/redeliver`,
        });
        expect(forward.statusCode).toBe(200);
      }
      await until(async () => killerAttempts() === attempt, `attempt ${attempt} to arrive`);
      await current.kill(); // already killed by the receiver: waits for its exit
    }
    // The next worker records the last lost attempt and ends the delivery.
    current = await work(env);
    await until(async () => (await recorded(id)) === MAX_ATTEMPTS, `attempt ${MAX_ATTEMPTS} recorded`);
    const [row] = await ctx.database.db.query<{ status: string; attempts: number; last_error: string }>(
      'SELECT status, attempts, last_error FROM webhook_deliveries WHERE id = $1',
      [id],
    );
    expect(row).toEqual({ status: 'CALLBACK_FAILED', attempts: MAX_ATTEMPTS, last_error: ABANDONED_ERROR });
    // A later callback through the same worker arrives, and still nothing more went to the killer.
    const [later] = (await enqueue(account.accountId, '/after-the-killer', 1)) as [string];
    await until(async () => (await countDelivered([later])) === 1, 'a later delivery');
    expect(killerAttempts()).toBe(MAX_ATTEMPTS);
    const errors = await ctx.database.db.query<{ error: string }>(
      'SELECT error FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempt',
      [id],
    );
    expect(errors).toEqual(Array(MAX_ATTEMPTS).fill({ error: ABANDONED_ERROR }));
    const [still] = await ctx.database.db.query<{ status: string; attempts: number }>(
      'SELECT status, attempts FROM webhook_deliveries WHERE id = $1',
      [id],
    );
    expect(still).toEqual({ status: 'CALLBACK_FAILED', attempts: MAX_ATTEMPTS });
  }, 300_000); // nine worker starts and eight lapsed leases, in real time
});
