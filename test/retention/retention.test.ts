import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { aiQueueHandler } from '../../src/ai/queue.js';
import { createResolver } from '../../src/ai/resolver.js';
import { createContext, withTransaction } from '../../src/context.js';
import * as jobsSql from '../../src/jobs/sql.js';
import { silentLog } from '../../src/logger.js';
import { createRetention, type Retention } from '../../src/retention/retention.js';
import type { RetentionTable } from '../../src/retention/tables.js';
import { deliveryQueueHandler } from '../../src/webhooks/delivery.js';
import { webhookOutbox } from '../../src/webhooks/outbox.js';
import { clearSecretBox } from '../../src/webhooks/secret-box.js';
import type { WebhookTransport } from '../../src/webhooks/transport-port.js';
import { createWorker, prunedTables, type Worker } from '../../src/worker/worker.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { expectLedgerReconciles } from '../helpers/ledger.js';

/**
 * Retention (docs/operations.md#retention) with a clock the test moves: finished work older than its period goes, in
 * batches; recent work stays; unfinished work (pending, running, or stuck with a lapsed lease)
 * never goes, however old; the ledger is untouched; a pruned record reads as unknown (404).
 */

const DAY = 24 * 3600_000;
const T0 = new Date('2026-01-01T00:00:00.000Z');
const HOOK = 'https://hooks.example.com/retention';

const transport: WebhookTransport = {
  send: async () => ({ kind: 'response', statusCode: 200, latencyMs: 1, bodyPreview: '' }),
  close: async () => {},
};

let ctx: TestContext;
let worker: Worker;
let retention: Retention;
/** Every room's pruned tables, as the worker hands them to the task. */
let tables: RetentionTable[];

// Each test on its own database: retention is global, and the other tests' work would be pruned too.
beforeEach(async () => {
  ctx = await createTestContext({ app: { webhookTransport: transport } });
  ctx.clock.set(T0);
  tables = await prunedTables(ctx.config);
  worker = await createWorker({
    config: ctx.config,
    db: ctx.database.db,
    clock: ctx.clock,
    log: silentLog,
    callbacks: webhookOutbox,
    liveVenues: [],
    webhookTransport: transport,
    secrets: clearSecretBox,
  });
  retention = newRetention();
});
afterEach(async () => {
  await ctx.close();
});

function newRetention(settings: Partial<TestContext['config']['retention']> = {}): Retention {
  return createRetention({
    db: ctx.database.db,
    tables,
    clock: ctx.clock,
    log: silentLog,
    settings: { ...ctx.config.retention, batchPauseMs: 0, ...settings },
  });
}

const drainAll = async () => {
  for (const name of ['ai-resolution', 'scheduled-jobs', 'webhook-deliveries']) {
    await worker.queues.get(name)?.drain();
  }
};

async function post(account: TestAccount, url: string, payload: object) {
  const response = await ctx.request(account.key, { method: 'POST', url: `/api/v1${url}`, payload });
  expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
  return response.json();
}

async function get(account: TestAccount, url: string) {
  return ctx.request(account.key, { method: 'GET', url: `/api/v1${url}` });
}

/** Finished work of every kind, made through the API and the worker's queues, at the clock's time. */
async function finishedWork(account: TestAccount) {
  const at = (ms: number) => new Date(ctx.clock.now().getTime() + ms).toISOString();
  const ai = await post(account, '/ai/resolve', {
    question: 'Done?',
    outcomes: ['Yes', 'No'],
    callbackUrl: HOOK,
  });
  const failedAi = await post(account, '/ai/resolve', {
    question: 'Failed?',
    outcomes: ['Yes', 'No'],
    context: '[sandbox:votes=0,0,x,x]',
    callbackUrl: HOOK,
  });
  const job = await post(account, '/price/schedule', {
    symbol: 'SOL',
    resolutionTimestamp: at(1000),
    callbackUrl: HOOK,
  });
  const cancelled = await post(account, '/price/schedule', {
    symbol: 'SOL',
    resolutionTimestamp: at(3600_000),
    callbackUrl: HOOK,
  });
  await post(account, `/price/scheduled/${cancelled.jobId}/cancel`, {});
  const test = await post(account, '/webhooks/test', { callbackUrl: HOOK });
  ctx.clock.advance(1000);
  await drainAll();
  const aiRows = await ctx.database.db.query<{ callback_delivery_id: string }>(
    'SELECT callback_delivery_id FROM ai_requests WHERE id = ANY($1::text[])',
    [[ai.requestId, failedAi.requestId]],
  );
  const [jobRow] = await ctx.database.db.query<{ delivery_id: string }>(
    'SELECT delivery_id FROM scheduled_jobs WHERE id = $1',
    [job.jobId],
  );
  const eventId = `ev-${ai.requestId}`;
  await ctx.database.db.query(
    `INSERT INTO market_events (id, type, body_sha256, at, ingested_at) VALUES ($1, 'stake', '\\x00', $2, $2)`,
    [eventId, ctx.clock.now()],
  );
  return {
    aiRequests: [ai.requestId as string, failedAi.requestId as string],
    jobs: [job.jobId as string, cancelled.jobId as string],
    deliveries: [...aiRows.map((r) => r.callback_delivery_id), jobRow?.delivery_id as string],
    testDeliveries: [test.deliveryId as string],
    events: [eventId],
  };
}

/** Work that has not finished: a job due months ahead; an AI request and a delivery left claimed. */
async function unfinishedWork(account: TestAccount) {
  const job = await post(account, '/price/schedule', {
    symbol: 'SOL',
    resolutionTimestamp: new Date(ctx.clock.now().getTime() + 300 * DAY).toISOString(),
    callbackUrl: HOOK,
  });
  const ai = await post(account, '/ai/resolve', {
    question: 'Stuck?',
    outcomes: ['Yes', 'No'],
    callbackUrl: HOOK,
  });
  const aiHandler = aiQueueHandler({
    db: ctx.database.db,
    clock: ctx.clock,
    log: silentLog,
    resolver: createResolver(ctx.config.ai, ctx.clock),
    callbacks: webhookOutbox,
    config: ctx.config.ai,
  });
  expect((await aiHandler.claim(10, ctx.clock.now())).map((r) => r.id)).toEqual([ai.requestId]);
  const delivery = await withTransaction(createContext(ctx.database.db, ctx.clock), (tx) =>
    webhookOutbox.enqueueCallback(tx, {
      accountId: account.accountId,
      url: HOOK,
      type: 'price',
      status: 'completed',
      requestId: 'req_stuck',
      data: {},
    }),
  );
  const deliveryHandler = deliveryQueueHandler({
    db: ctx.database.db,
    clock: ctx.clock,
    log: silentLog,
    transport,
    secrets: clearSecretBox,
    settings: ctx.config.webhooks,
  });
  expect((await deliveryHandler.claim(10, ctx.clock.now())).map((d) => d.id)).toEqual([delivery]);
  return { job: job.jobId as string, aiRequest: ai.requestId as string, delivery };
}

async function present(table: string, ids: string[]): Promise<string[]> {
  const rows = await ctx.database.db.query<{ id: string }>(
    `SELECT id FROM ${table} WHERE id = ANY($1::text[]) ORDER BY id`,
    [ids],
  );
  return rows.map((r) => r.id);
}

async function ledgerEntries(): Promise<unknown[]> {
  return ctx.database.db.query('SELECT * FROM ledger_entries ORDER BY id');
}

describe('retention', () => {
  it('prunes old finished work, keeps recent and unfinished work, and never touches the ledger', async () => {
    const account = await ctx.createAccount({ balanceUsd: '10.00' });
    const old = await finishedWork(account);
    const [oldAttempts] = await ctx.database.db.query<{ n: bigint }>(
      'SELECT count(*) AS n FROM webhook_attempts WHERE delivery_id = ANY($1::text[])',
      [old.deliveries],
    );
    expect(oldAttempts?.n).toBe(3n);

    // 89 days later: another round of finished work, then unfinished work: a job due months ahead,
    // and an AI request and a delivery whose workers died after claiming them (never resumed here).
    ctx.clock.set(new Date(T0.getTime() + 89 * DAY));
    const recent = await finishedWork(account);
    const unfinished = await unfinishedWork(account);
    const ledgerBefore = await ledgerEntries();

    // 91 days after T0, 2 after the recent round.
    ctx.clock.set(new Date(T0.getTime() + 91 * DAY));
    // Market stream events: kept 24 hours (one 25 hours old goes, one an hour old stays).
    await ctx.database.db.query(
      `INSERT INTO market_stream_events (id, market_id, kind, data, created_at)
       VALUES (900001, 'm', 'market', '{}', $1), (900002, 'm', 'market', '{}', $2)`,
      [new Date(ctx.clock.now().getTime() - 25 * 3_600_000), new Date(ctx.clock.now().getTime() - 3_600_000)],
    );
    // Account events: an old one goes, an old one whose delivery still waits stays, a recent one stays.
    await ctx.database.db.query(
      `INSERT INTO account_events (id, account_id, mode, type, data, created_at)
       VALUES ('evt_retention_old', $1, 'sandbox', 'key.expiring', '{}', $2),
              ('evt_retention_waiting', $1, 'sandbox', 'key.expiring', '{}', $2),
              ('evt_retention_recent', $1, 'sandbox', 'key.expiring', '{}', $3)`,
      [account.accountId, new Date(T0.getTime() - DAY), ctx.clock.now()],
    );
    await ctx.database.db.query(
      `INSERT INTO webhook_deliveries (id, account_id, url, type, request_id, payload, status, due_at, max_attempts,
                                       created_at, endpoint_id, event_id)
       VALUES ('evt_retention_waiting_we_x', $1, 'https://hooks.example.com/x', 'key.expiring', 'evt_retention_waiting',
               '{}', 'PENDING', $2, 8, $2, 'we_x', 'evt_retention_waiting')`,
      [account.accountId, new Date(T0.getTime() + 200 * DAY)],
    );
    const report = await retention.run(ctx.clock.now());
    expect(
      await present('account_events', ['evt_retention_old', 'evt_retention_waiting', 'evt_retention_recent']),
    ).toEqual(['evt_retention_recent', 'evt_retention_waiting']);
    expect(report).toEqual({
      account_events: expect.any(Number), // the old one and the old work's events: checked above
      webhook_deliveries: 3, // the old AI requests' and the old job's callbacks
      'webhook_deliveries (test)': 2, // the old test event, and the recent one (older than 24 hours)
      ai_requests: 2,
      scheduled_jobs: 2, // the old completed job and the old cancelled one
      market_events: 1,
      market_stream_events: 1,
      // Sessions and challenges: test/dashboard/sessions.test.ts.
      'dashboard_sessions (expired)': 0,
      'dashboard_sessions (idle)': 0,
      sign_in_challenges: 0,
      idempotency_keys: 0,
      idempotency_parts: 0,
      auth_changes: 0,
    });
    const all = (kind: keyof typeof old) => [...old[kind], ...recent[kind]];
    expect(await present('ai_requests', all('aiRequests'))).toEqual([...recent.aiRequests].sort());
    expect(await present('scheduled_jobs', all('jobs'))).toEqual([...recent.jobs].sort());
    expect(await present('webhook_deliveries', all('deliveries'))).toEqual([...recent.deliveries].sort());
    expect(await present('webhook_deliveries', all('testDeliveries'))).toEqual([]);
    expect(await present('market_events', all('events'))).toEqual(recent.events);
    // The children went with their rows, and only those.
    const orphans = await ctx.database.db.query(
      `SELECT 'vote' AS kind FROM ai_votes v WHERE NOT EXISTS (SELECT 1 FROM ai_requests r WHERE r.id = v.request_id)
       UNION ALL
       SELECT 'attempt' FROM webhook_attempts a
        WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = a.delivery_id)`,
    );
    expect(orphans).toEqual([]);
    const [votes] = await ctx.database.db.query<{ n: bigint }>(
      'SELECT count(*) AS n FROM ai_votes WHERE request_id = ANY($1::text[])',
      [recent.aiRequests],
    );
    expect(votes?.n).toBe(8n);
    // The ledger is never pruned: every charge and refund of the pruned work is still there.
    expect(await ledgerEntries()).toEqual(ledgerBefore);
    await expectLedgerReconciles(ctx.database.db);

    // A pruned record reads like one that never existed.
    for (const [url, code] of [
      [`/ai/request/${old.aiRequests[0]}`, 'NOT_FOUND'],
      [`/ai/result/${old.aiRequests[0]}`, 'NOT_FOUND'],
      [`/price/scheduled/${old.jobs[0]}`, 'JOB_NOT_FOUND'],
      [`/webhooks/deliveries/${old.deliveries[0]}`, 'NOT_FOUND'],
      [`/webhooks/deliveries/${old.testDeliveries[0]}`, 'NOT_FOUND'],
    ] as const) {
      const response = await get(account, url);
      expect({ url, status: response.statusCode, code: response.json().code }).toEqual({
        url,
        status: 404,
        code,
      });
    }

    // Years later every finished row is gone; unfinished work never goes, however old.
    ctx.clock.set(new Date(T0.getTime() + 1000 * DAY));
    await retention.run(ctx.clock.now());
    expect(await present('ai_requests', [...all('aiRequests'), unfinished.aiRequest])).toEqual([
      unfinished.aiRequest,
    ]);
    expect(await present('scheduled_jobs', [...all('jobs'), unfinished.job])).toEqual([unfinished.job]);
    expect(await present('webhook_deliveries', [...all('deliveries'), unfinished.delivery])).toEqual([
      unfinished.delivery,
    ]);
    expect(await ledgerEntries()).toEqual(ledgerBefore);
    await expectLedgerReconciles(ctx.database.db);
  });

  it('deletes in batches of RETENTION_BATCH_SIZE, each statement at most that many; stops when the process does', async () => {
    const account = await ctx.createAccount({ balanceUsd: '10.00' });
    const due = new Date(ctx.clock.now().getTime() + 1000).toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const job = await post(account, '/price/schedule', {
        symbol: 'SOL',
        resolutionTimestamp: due,
        callbackUrl: HOOK,
      });
      ids.push(job.jobId);
    }
    ctx.clock.advance(1000);
    await drainAll();
    ctx.clock.advance(91 * DAY);
    const cutoff = new Date(ctx.clock.now().getTime() - ctx.config.retention.jobsMs);
    const [one] = await ctx.database.db.query<{ deleted: bigint | number }>(jobsSql.PRUNE, [cutoff, 2]);
    expect(Number(one?.deleted)).toBe(2);
    expect(await present('scheduled_jobs', ids)).toHaveLength(3);
    // A process that is stopping ends its run after the batch in progress.
    const retention = newRetention({ batchSize: 2 });
    expect(await retention.run(ctx.clock.now(), AbortSignal.abort())).toEqual({ webhook_deliveries: 2 });
    expect(await present('scheduled_jobs', ids)).toHaveLength(3);
    const report = await retention.run(ctx.clock.now());
    expect(report).toMatchObject({ scheduled_jobs: 3, webhook_deliveries: 3 });
    expect(await present('scheduled_jobs', ids)).toEqual([]);
  });

  it('two workers at once: one prunes, the other finds the lease held and skips; a lapsed lease is taken over', async () => {
    const account = await ctx.createAccount({ balanceUsd: '10.00' });
    const done = await finishedWork(account);
    ctx.clock.advance(91 * DAY);
    const [a, b] = [newRetention(), newRetention()];
    const reports = await Promise.all([a.run(ctx.clock.now()), b.run(ctx.clock.now())]);
    expect(reports.filter((r) => r === null)).toHaveLength(1);
    const ran = reports.find((r) => r !== null);
    expect(ran).toMatchObject({ ai_requests: 2, scheduled_jobs: 2, webhook_deliveries: 3 });
    expect(await present('ai_requests', done.aiRequests)).toEqual([]);

    // The holder keeps the lease for one interval; then (say it died) the other takes it over.
    const holder = reports[0] === null ? b : a;
    const other = holder === a ? b : a;
    ctx.clock.advance(ctx.config.retention.intervalMs - 1);
    expect(await other.run(ctx.clock.now())).toBeNull();
    ctx.clock.advance(1);
    expect(await other.run(ctx.clock.now())).not.toBeNull();
  });
});
