import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aiQueueHandler } from '../../src/ai/queue.js';
import { saveVote } from '../../src/ai/requests.js';
import { createResolver } from '../../src/ai/resolver.js';
import { type Log, silentLog } from '../../src/logger.js';
import { webhookOutbox } from '../../src/webhooks/outbox.js';
import type { CallbackOutbox } from '../../src/webhooks/port.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';
import { type FakeLlm, fakeSlotsEnv, startFakeLlm } from './fake-llm.js';
import { callbacksOf, createCallbackTable, poll, question, submit, testQueue } from './helpers.js';

/**
 * The resolution worker: the result, the refund of a FAILED request and the callback row commit in
 * one transaction or not at all; answers are stored as they arrive, so a resumed request asks only
 * the models that had not answered; a worker that lost its lease can finish nothing.
 */

let ctx: TestContext;
let fakes: FakeLlm[];
// The deadline is real time: far above a fake model's answer, so a loaded machine cannot fail a case
// by it (no case here is about the deadline). The lease runs on the manual clock.
const LEASE_MS = 31_000;

beforeAll(async () => {
  fakes = await Promise.all(
    (['openai', 'anthropic', 'google', 'xai'] as const).map((kind) => startFakeLlm(kind)),
  );
  ctx = await createTestContext({
    config: fakeSlotsEnv(fakes, {
      AI_DEADLINE_MS: '30000',
      AI_LEASE_MS: String(LEASE_MS),
      AI_MAX_ATTEMPTS: '3',
    }),
  });
  await createCallbackTable(ctx.database.db);
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
  for (const fake of fakes) await fake.close();
});

const asks = () => fakes.map((f) => f.server.requests.length);

async function statusOf(requestId: string): Promise<string | undefined> {
  const [row] = await ctx.database.db.query<{ status: string }>(
    'SELECT status FROM ai_requests WHERE id = $1',
    [requestId],
  );
  return row?.status;
}

async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 10));
}

function recordingLog(): Log & { lines: string[] } {
  const lines: string[] = [];
  return { ...silentLog, lines, warn: (_obj, msg) => lines.push(msg), error: (_obj, msg) => lines.push(msg) };
}

describe('finishing a request', () => {
  it('a callback that cannot be written rolls back the result and the refund; the retry commits them once', async () => {
    const account = await ctx.createAccount({ mode: 'live', balanceUsd: '1.00' });
    for (const fake of fakes.slice(2)) fake.setReply(() => ({ error: 400 }));
    const requestId = (await submit(ctx, account.key, question())).json().requestId as string;
    const failing: CallbackOutbox = {
      ...webhookOutbox,
      async enqueueCallback(tx, input) {
        await webhookOutbox.enqueueCallback(tx, input); // written, then the transaction fails
        throw new Error('outbox unavailable');
      },
    };
    const log = recordingLog();
    const before = asks();
    await testQueue(ctx, { callbacks: failing, log }).drain();
    expect(log.lines).toEqual(['work item failed; retried after its lease']);
    expect(await statusOf(requestId)).toBe('PROCESSING');
    expect(await callbacksOf(ctx.database.db, requestId)).toEqual([]);
    expect(await countEntries(ctx.database.db, account.accountId, 'refund')).toBe(0);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(750_000n);
    // Its four answers were stored as they arrived.
    const [votes] = await ctx.database.db.query<{ n: bigint }>(
      'SELECT count(*) AS n FROM ai_votes WHERE request_id = $1',
      [requestId],
    );
    expect(votes?.n).toBe(4n);

    ctx.clock.advance(LEASE_MS + 1);
    const asked = asks();
    expect(await testQueue(ctx).drain()).toBe(1);
    expect(asks()).toEqual(asked); // no model asked again
    expect(asked.map((n, i) => n - (before[i] ?? 0))).toEqual([1, 1, 1, 1]); // a 400 is not retried
    expect(await statusOf(requestId)).toBe('FAILED');
    expect(await callbacksOf(ctx.database.db, requestId)).toHaveLength(1);
    expect(await countEntries(ctx.database.db, account.accountId, 'refund')).toBe(1);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(1_000_000n);
    for (const fake of fakes)
      fake.setReply(() => ({ answer: { outcomeIndex: 0, confidence: 0.9, reasoning: 'r' } }));
  });

  it('a resumed request asks only the models that had not answered, and counts the stored answers', async () => {
    const account = await ctx.createAccount({ mode: 'live', balanceUsd: '1.00' });
    const requestId = (await submit(ctx, account.key, question())).json().requestId as string;
    // A worker claims it, three answers arrive and are stored, then the worker dies.
    const handler = aiQueueHandler({
      db: ctx.database.db,
      clock: ctx.clock,
      log: silentLog,
      resolver: createResolver(ctx.config.ai, ctx.clock),
      callbacks: webhookOutbox,
      config: ctx.config.ai,
    });
    const [claimed] = await handler.claim(1, ctx.clock.now());
    expect(claimed?.id).toBe(requestId);
    const lease = { id: requestId, leaseToken: claimed?.lease_token as string };
    const stored = {
      latencyMs: 120,
      error: null,
      usage: { inputTokens: 10, outputTokens: 5 },
      evidence: [],
      searches: null,
      search: null,
      abstainReason: null,
    };
    await saveVote(
      ctx.database.db,
      lease,
      {
        ...stored,
        position: 0,
        model: 'openai/gpt-4.1-mini',
        outcomeIndex: 1,
        confidence: 0.8,
        reasoning: 'a',
      },
      ctx.clock.now(),
    );
    await saveVote(
      ctx.database.db,
      lease,
      {
        ...stored,
        position: 1,
        model: 'anthropic/claude-sonnet-4-5',
        outcomeIndex: 1,
        confidence: 0.9,
        reasoning: 'b',
      },
      ctx.clock.now(),
    );
    await saveVote(
      ctx.database.db,
      lease,
      {
        ...stored,
        position: 2,
        model: 'google/gemini-2.5-flash',
        outcomeIndex: 0,
        confidence: 0.9,
        reasoning: 'c',
      },
      ctx.clock.now(),
    );

    const queue = testQueue(ctx);
    expect(await queue.drain()).toBe(0); // still leased
    ctx.clock.advance(LEASE_MS + 1);
    fakes[3]?.setReply(() => ({ answer: { outcomeIndex: 1, confidence: 0.7, reasoning: 'd' } }));
    const before = asks();
    expect(await queue.drain()).toBe(1);
    expect(asks().map((n, i) => n - (before[i] ?? 0))).toEqual([0, 0, 0, 1]);
    const record = (await poll(ctx, account.key, requestId)).json();
    expect(record.result).toMatchObject({
      winningOutcomeIndex: 1,
      agreement: 0.75,
      confidence: 0.8,
      canDetermine: true,
    });
    expect(record.votes.map((v: { reasoning: string }) => v.reasoning)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('a worker that lost its lease cannot store answers or finish: one refund, one callback', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const requestId = (
      await submit(ctx, account.key, question({ context: '[sandbox:votes=0,0,x,x][sandbox:delay=300]' }))
    ).json().requestId as string;
    const logA = recordingLog();
    const first = testQueue(ctx, { log: logA }).drain();
    await until(async () => (await statusOf(requestId)) === 'PROCESSING');
    ctx.clock.advance(LEASE_MS + 1); // the first worker hangs past its lease; another takes over
    const second = testQueue(ctx).drain();
    expect(await Promise.all([first, second])).toEqual([1, 1]);
    expect(logA.lines).toContain('AI request taken over by another worker; not finishing it');
    expect(await statusOf(requestId)).toBe('FAILED');
    expect(await countEntries(ctx.database.db, account.accountId, 'refund')).toBe(1);
    expect(await callbacksOf(ctx.database.db, requestId)).toHaveLength(1);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(1_000_000n);
  });

  it('after its last attempt a request finishes with what was answered; the rest count as abandoned', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const requestId = (await submit(ctx, account.key, question())).json().requestId as string;
    const handler = aiQueueHandler({
      db: ctx.database.db,
      clock: ctx.clock,
      log: silentLog,
      resolver: createResolver(ctx.config.ai, ctx.clock),
      callbacks: webhookOutbox,
      config: ctx.config.ai,
    });
    for (let attempt = 1; attempt <= 3; attempt++) {
      expect((await handler.claim(1, ctx.clock.now())).map((r) => r.attempts)).toEqual([attempt]);
      ctx.clock.advance(LEASE_MS + 1); // and its worker dies each time
    }
    expect(await testQueue(ctx).drain()).toBe(1);
    const record = (await poll(ctx, account.key, requestId)).json();
    expect(record.status).toBe('FAILED');
    expect(record.votes.map((v: { error: { kind: string } }) => v.error.kind)).toEqual([
      'abandoned',
      'abandoned',
      'abandoned',
      'abandoned',
    ]);
    expect(await countEntries(ctx.database.db, account.accountId, 'refund')).toBe(1);
  });

  it('provider keys never reach the logs or the record, even when a provider echoes them back', async () => {
    const account = await ctx.createAccount({ mode: 'live', balanceUsd: '1.00' });
    for (const fake of fakes) {
      fake.setReply((request) => ({
        error: 401,
        message: `Incorrect API key provided: ${request.headers.authorization ?? request.headers['x-api-key'] ?? request.headers['x-goog-api-key']}`,
      }));
    }
    const lines: string[] = [];
    const log: Log = {
      info: (obj, msg) => lines.push(`${JSON.stringify(obj)} ${msg}`),
      warn: (obj, msg) => lines.push(`${JSON.stringify(obj)} ${msg}`),
      error: (obj, msg) => lines.push(`${JSON.stringify(obj)} ${msg}`),
    };
    const requestId = (await submit(ctx, account.key, question())).json().requestId as string;
    await testQueue(ctx, { log }).drain();
    const record = (await poll(ctx, account.key, requestId)).json();
    expect(record.status).toBe('FAILED');
    expect(record.votes.map((v: { error: { message: string } }) => v.error.message)).toEqual([
      'HTTP 401 (invalid_request_error)',
      'HTTP 401 (authentication_error)',
      'HTTP 401 (UNAUTHENTICATED)',
      // xAI's Responses API answers a flat {code, error} whose code is a sentence, not an identifier.
      'HTTP 401',
    ]);
    expect(lines.length).toBeGreaterThan(0);
    expect(`${JSON.stringify(record)}\n${lines.join('\n')}`).not.toContain('sk-test-secret-key');
    for (const fake of fakes)
      fake.setReply(() => ({ answer: { outcomeIndex: 0, confidence: 0.9, reasoning: 'r' } }));
  });

  it('two workers draining 40 requests at once resolve each exactly once', async () => {
    const account = await ctx.createAccount({ balanceUsd: '20.00' });
    const contexts = ['', '[sandbox:votes=0,0,x,x]', '[sandbox:votes=?,?,?,1]', '[sandbox:delay=20]'];
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const response = await submit(ctx, account.key, question({ context: contexts[i % 4] }));
      ids.push(response.json().requestId);
    }
    const [a, b] = await Promise.all([testQueue(ctx).drain(), testQueue(ctx).drain()]);
    expect((a ?? 0) + (b ?? 0)).toBe(40);
    const rows = await ctx.database.db.query<{ request_id: string; n: bigint }>(
      'SELECT request_id, count(*) AS n FROM test_recorded_callbacks WHERE request_id = ANY($1) GROUP BY request_id',
      [ids],
    );
    expect(rows).toHaveLength(40);
    expect(rows.every((r) => r.n === 1n)).toBe(true);
    expect(await countEntries(ctx.database.db, account.accountId, 'refund')).toBe(10);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(20_000_000n - 30n * 250_000n);
  });
});
