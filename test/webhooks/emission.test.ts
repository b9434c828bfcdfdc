import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLog } from '../../src/logger.js';
import { webhookOutbox } from '../../src/webhooks/outbox.js';
import { createWorker, type Worker } from '../../src/worker/worker.js';
import { type FakeLlm, fakeSlotsEnv, startFakeLlm } from '../ai/fake-llm.js';
import { question, submit, testQueue } from '../ai/helpers.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';

/**
 * The events made by the service's own work, each in the transaction that made it: a resolution's
 * (POST /ai/resolve) and a scheduled job's, completed and failed, to the account's subscribed
 * endpoints only.
 */

let ctx: TestContext;
let fakes: FakeLlm[];
let worker: Worker;
const UNKNOWN_MINT = '9n4nbM75f5Ui33ZbPYXn59EwSgE8CGsHtAeTH5YFeJ9E';

beforeAll(async () => {
  fakes = await Promise.all(
    (['openai', 'anthropic', 'google', 'xai'] as const).map((kind) => startFakeLlm(kind)),
  );
  ctx = await createTestContext({ config: fakeSlotsEnv(fakes, { AI_DEADLINE_MS: '30000' }) });
  worker = await createWorker({
    config: ctx.config,
    db: ctx.database.db,
    clock: ctx.clock,
    log: silentLog,
    callbacks: webhookOutbox,
    liveVenues: [],
  });
});
afterAll(async () => {
  await ctx.close();
  for (const fake of fakes) await fake.close();
});

async function endpoint(account: TestAccount, path: string, eventTypes: string[]): Promise<string> {
  const answer = await ctx.request(account.key, {
    method: 'POST',
    url: '/api/v1/webhooks/endpoints',
    payload: { url: `https://hooks.example.com${path}`, eventTypes },
  });
  expect(answer.statusCode).toBe(200);
  return answer.json().id;
}

async function eventsTo(endpointId: string) {
  const rows = await ctx.database.db.query<{ type: string; payload: string }>(
    'SELECT type, payload FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY created_at, id',
    [endpointId],
  );
  return rows.map(
    (row) =>
      JSON.parse(row.payload) as { id: string; type: string; mode: string; data: Record<string, unknown> },
  );
}

describe('events of AI resolutions', () => {
  it('resolution.completed and resolution.failed reach the subscribed endpoint, in the finishing transaction', async () => {
    const account = await ctx.createAccount({ mode: 'live', balanceUsd: '1.00' });
    const other = await ctx.createAccount({ mode: 'live', balanceUsd: '1.00' });
    const resolutions = await endpoint(account, '/resolutions', [
      'resolution.completed',
      'resolution.failed',
    ]);
    const jobsOnly = await endpoint(account, '/jobs', ['job.completed']);
    const stranger = await endpoint(other, '/stranger', ['*']);
    for (const fake of fakes)
      fake.setReply(() => ({ answer: { outcomeIndex: 0, confidence: 0.9, reasoning: 'r' } }));
    const done = (await submit(ctx, account.key, question())).json().requestId as string;
    await testQueue(ctx).drain();
    for (const fake of fakes.slice(1)) fake.setReply(() => ({ error: 400 }));
    const failed = (await submit(ctx, account.key, question())).json().requestId as string;
    await testQueue(ctx).drain();
    for (const fake of fakes)
      fake.setReply(() => ({ answer: { outcomeIndex: 0, confidence: 0.9, reasoning: 'r' } }));

    // Made at the same (manual) time: in the catalog's order.
    const events = (await eventsTo(resolutions)).sort((a, b) => a.type.localeCompare(b.type));
    expect(events.map((e) => [e.type, e.data.requestId])).toEqual([
      ['resolution.completed', done],
      ['resolution.failed', failed],
    ]);
    expect(events[0]).toMatchObject({ mode: 'live', data: { jobId: null, result: { requestId: done } } });
    expect(events[1]?.data.error).toMatchObject({ code: 'AI_RESOLUTION_FAILED' });
    expect(await eventsTo(jobsOnly)).toEqual([]);
    expect(await eventsTo(stranger)).toEqual([]);
  });
});

describe('events of scheduled jobs', () => {
  it('job.completed and job.failed reach the subscribed endpoint, and the callbackUrl still gets its callback', async () => {
    ctx.clock.set('2026-11-22T12:00:00.000Z');
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const jobs = await endpoint(account, '/jobs', ['job.completed', 'job.failed']);
    const schedule = async (symbol: string) => {
      const answer = await ctx.request(account.key, {
        method: 'POST',
        url: '/api/v1/price/schedule',
        payload: {
          symbol,
          resolutionTimestamp: new Date(ctx.clock.now().getTime() + 60_000).toISOString(),
          callbackUrl: 'https://hooks.example.com/callback',
        },
      });
      expect(answer.statusCode).toBe(200);
      return answer.json().jobId as string;
    };
    const ok = await schedule('SOL');
    const bad = await schedule(UNKNOWN_MINT);
    ctx.clock.advance(60_000);
    await worker.queues.get('scheduled-jobs')?.drain();
    const events = await eventsTo(jobs);
    expect(events.map((e) => [e.type, e.data.jobId]).sort()).toEqual(
      [
        ['job.completed', ok],
        ['job.failed', bad],
      ].sort(),
    );
    const completed = events.find((e) => e.type === 'job.completed');
    expect(completed).toMatchObject({ mode: 'sandbox', data: { type: 'price', result: { symbol: 'SOL' } } });
    expect(events.find((e) => e.type === 'job.failed')?.data.error).toMatchObject({
      code: expect.any(String),
    });
    const callbacks = await ctx.database.db.query<{ n: number }>(
      "SELECT count(*)::integer AS n FROM webhook_deliveries WHERE endpoint_id IS NULL AND url = 'https://hooks.example.com/callback'",
    );
    expect(callbacks[0]?.n).toBe(2);
  });
});

describe('events of scheduled jobs without a callbackUrl', () => {
  it('job.completed reaches the subscribed endpoint once per job, with no callback of its own', async () => {
    ctx.clock.set('2026-11-23T12:00:00.000Z');
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const other = await ctx.createAccount({ balanceUsd: '1.00' });
    const jobs = await endpoint(account, '/jobs', ['job.completed']);
    const failures = await endpoint(account, '/failures', ['job.failed']);
    const at = new Date(ctx.clock.now().getTime() + 60_000).toISOString();
    const schedule = async (key: string) => {
      const answer = await ctx.request(key, {
        method: 'POST',
        url: '/api/v1/price/scheduled',
        payload: { symbol: 'SOL', scheduledFor: at },
      });
      expect(answer.statusCode).toBe(200);
      return answer.json().jobId as string;
    };
    // Due together and finished together: the finishing of a batch that makes no callback.
    const ids = [await schedule(account.key), await schedule(account.key), await schedule(account.key)];
    const stranger = await schedule(other.key);
    ctx.clock.advance(60_000);
    await worker.queues.get('scheduled-jobs')?.drain();

    const events = await eventsTo(jobs);
    expect(events.map((e) => e.data.jobId).sort()).toEqual([...ids].sort());
    for (const event of events) {
      expect(event).toMatchObject({ type: 'job.completed', mode: 'sandbox', data: { type: 'price' } });
      expect(event.id).toMatch(/^evt_[1-9A-HJ-NP-Za-km-z]{24}$/);
      expect(event.data.result).toMatchObject({ symbol: 'SOL', requestId: event.data.requestId });
    }
    expect(new Set(events.map((e) => e.id)).size).toBe(3);
    // The body, built by the finishing statement, is written as every event's: compact JSON, its
    // fields and the result's in the order the worker wrote them (not jsonb's), at the finish time.
    const bodies = await ctx.database.db.query<{ payload: string }>(
      'SELECT payload FROM webhook_deliveries WHERE endpoint_id = $1',
      [jobs],
    );
    for (const { payload } of bodies) {
      const body = JSON.parse(payload);
      expect(payload).toBe(JSON.stringify(body));
      expect(Object.keys(body)).toEqual(['id', 'type', 'createdAt', 'mode', 'data']);
      expect(Object.keys(body.data)).toEqual(['jobId', 'type', 'requestId', 'result']);
      expect(Object.keys(body.data.result).slice(0, 2)).toEqual(['requestId', 'symbol']);
      expect(body.createdAt).toBe(ctx.clock.now().toISOString());
    }
    expect(await eventsTo(failures)).toEqual([]);
    // Recorded for the account without endpoints too, and delivered nowhere.
    const recorded = await ctx.database.db.query<{ account_id: string; n: number }>(
      `SELECT account_id, count(*)::integer AS n FROM account_events
        WHERE type = 'job.completed' AND data->>'jobId' = ANY($1::text[]) GROUP BY account_id`,
      [[...ids, stranger]],
    );
    expect(Object.fromEntries(recorded.map((r) => [r.account_id, r.n]))).toEqual({
      [account.accountId]: 3,
      [other.accountId]: 1,
    });
    // The event's row keeps the job's id, type and request id, not its result a second time: the
    // job keeps it, and the delivery carries it whole (above).
    for (const event of events) {
      const [row] = await ctx.database.db.query<{ data: unknown }>(
        'SELECT data FROM account_events WHERE id = $1',
        [event.id],
      );
      const { result, ...reference } = event.data;
      expect(row?.data).toEqual(reference);
      expect(Object.keys(reference).sort()).toEqual(['jobId', 'requestId', 'type']);
      const job = await ctx.request(account.key, {
        method: 'GET',
        url: `/api/v1/price/scheduled/${event.data.jobId}`,
      });
      expect(job.json().result).toEqual(result);
    }
    const callbacks = await ctx.database.db.query<{ n: number }>(
      'SELECT count(*)::integer AS n FROM webhook_deliveries WHERE request_id = ANY($1::text[])',
      [[...ids, stranger]],
    );
    expect(callbacks[0]?.n).toBe(0);
  });
});
