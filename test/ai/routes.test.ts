import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxEvidence, sandboxOutcome } from '../../src/ai/sandbox.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { balanceOf, countEntries, expectLedgerReconciles } from '../helpers/ledger.js';
import { type FakeLlm, fakeSlotsEnv, startFakeLlm } from './fake-llm.js';
import {
  CALLBACK_URL,
  callbacksOf,
  createCallbackTable,
  poll,
  question,
  submit,
  testQueue,
} from './helpers.js';

/**
 * POST /ai/resolve and GET /ai/request/:id (and its alias) end to end: the submit answers
 * `processing` and charges 0.25 with the row; the worker resolves; polling shows the record with
 * every vote; a FAILED resolution is refunded once; the callback row commits with the result.
 */

let ctx: TestContext;
let fakes: FakeLlm[];

beforeAll(async () => {
  fakes = [
    await startFakeLlm('openai', () => ({
      answer: { outcomeIndex: 0, confidence: 0.9, reasoning: 'NASA confirmed the splashdown.' },
      usage: { input: 400, output: 30 },
    })),
    await startFakeLlm('anthropic', () => ({
      answer: { outcomeIndex: 0, confidence: 0.8, reasoning: 'Splashdown on April 10.' },
      usage: { input: 410, output: 31 },
    })),
    await startFakeLlm('google', () => ({ prose: 'Yes, it did.' })),
    await startFakeLlm('xai', () => ({
      answer: { outcomeIndex: 0, confidence: 0.7, reasoning: 'Reported widely.' },
      usage: { input: 420, output: 32 },
    })),
  ];
  ctx = await createTestContext({ config: fakeSlotsEnv(fakes) });
  await createCallbackTable(ctx.database.db);
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
  for (const fake of fakes) await fake.close();
});

describe('POST /ai/resolve, then polling', () => {
  it('sandbox: charged 0.25 at submit, PENDING, then COMPLETED with the result, the votes and one callback', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const body = { ...question(), context: 'The mission launched in 2026.' };
    const response = await submit(ctx, account.key, body);
    expect(response.statusCode).toBe(200);
    const requestId = response.headers['x-request-id'] as string;
    expect(response.json()).toEqual({
      requestId,
      status: 'processing',
      costUsd: '0.25',
      remainingBalanceUsd: '0.75',
    });

    const pending = await poll(ctx, account.key, requestId);
    expect(pending.statusCode).toBe(200);
    expect(pending.json()).toEqual({
      requestId,
      status: 'PENDING',
      question: body.question,
      outcomes: body.outcomes,
      context: body.context,
      createdAt: ctx.clock.now().toISOString(),
      votes: [],
    });

    expect(await testQueue(ctx).drain()).toBe(1);
    const winner = sandboxOutcome(body.question, 2);
    const result = {
      requestId,
      question: body.question,
      outcomes: body.outcomes,
      context: body.context,
      winningOutcomeIndex: winner,
      winningOutcomeLabel: body.outcomes[winner],
      confidence: 0.9,
      agreement: 1,
      reasoning: ['alpha', 'beta', 'gamma', 'delta']
        .map((m) => `sandbox/${m}: Sandbox answer: the outcome chosen by a hash of the question.`)
        .join('\n'),
      modelsUsed: ['sandbox/alpha', 'sandbox/beta', 'sandbox/gamma', 'sandbox/delta'],
      canDetermine: true,
      abstainReason: null,
      costUsd: '0.25',
      remainingBalanceUsd: '0.75',
    };
    const votes = ['alpha', 'beta', 'gamma', 'delta'].map((m) => ({
      model: `sandbox/${m}`,
      outcomeIndex: winner,
      confidence: 0.9,
      reasoning: 'Sandbox answer: the outcome chosen by a hash of the question.',
      latencyMs: expect.any(Number),
      error: null,
      usage: { inputTokens: 0, outputTokens: 0 },
      // The sandbox's deterministic source (docs/ai.md#sandbox), dated when the answer came.
      evidence: [{ ...sandboxEvidence(body.question), retrievedAt: ctx.clock.now().toISOString() }],
      searches: 1,
      abstainReason: null,
      search: 'on',
    }));
    const done = await poll(ctx, account.key, requestId);
    expect(done.json()).toEqual({
      requestId,
      status: 'COMPLETED',
      question: body.question,
      outcomes: body.outcomes,
      context: body.context,
      createdAt: ctx.clock.now().toISOString(),
      completedAt: ctx.clock.now().toISOString(),
      result,
      votes,
      // The callback's delivery, waiting for the delivery worker (none runs in this test).
      delivery: {
        id: expect.stringMatching(/^msg_/),
        webhookId: expect.stringMatching(/^msg_/),
        type: 'ai',
        requestId,
        originalRequestId: requestId,
        url: CALLBACK_URL,
        status: 'PENDING',
        attemptCount: 0,
        nextAttemptAt: ctx.clock.now().toISOString(),
        lastStatusCode: null,
        lastError: null,
        createdAt: ctx.clock.now().toISOString(),
        finishedAt: null,
        cancelledAt: null,
        attempts: [],
      },
    });
    const alias = await poll(ctx, account.key, requestId, true);
    expect({ ...alias.json(), requestId }).toEqual(done.json());

    const callbacks = await callbacksOf(ctx.database.db, requestId);
    expect(callbacks).toEqual([
      {
        id: expect.stringMatching(/^msg_/),
        account_id: account.accountId,
        url: CALLBACK_URL,
        type: 'ai',
        status: 'completed',
        request_id: requestId,
        // The result and the votes, each with its evidence (docs/ai.md#callbacks).
        data: { ...result, votes: done.json().votes },
      },
    ]);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(750_000n);
    expect(await countEntries(ctx.database.db, account.accountId, 'charge')).toBe(1);
  });

  it('a FAILED resolution (2 valid answers) is refunded once, and its callback says failed', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00' });
    const response = await submit(ctx, account.key, question({ context: '[sandbox:votes=0,0,x,x]' }));
    const requestId = response.json().requestId as string;
    await testQueue(ctx).drain();
    const record = (await poll(ctx, account.key, requestId)).json();
    const error = {
      code: 'AI_RESOLUTION_FAILED',
      message: 'Only 2 of 4 models gave a valid answer (3 are needed); the charge of 0.25 USD was refunded',
    };
    expect(record).toMatchObject({ status: 'FAILED', error, refundUsd: '0.25' });
    expect(record.result).toBeUndefined();
    expect(record.votes.map((v: { error: { kind: string } | null }) => v.error?.kind ?? null)).toEqual([
      null,
      null,
      'http_error',
      'http_error',
    ]);
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(1_000_000n);
    expect(await countEntries(ctx.database.db, account.accountId, 'refund')).toBe(1);
    const [callback] = await callbacksOf(ctx.database.db, requestId);
    // The same billing fields as a failed scheduled job's callback.
    expect(callback).toMatchObject({ status: 'failed' });
    expect(callback?.data).toEqual({ requestId, error, refundUsd: '0.25', remainingBalanceUsd: '1.00' });
  });

  it('live: four providers asked in parallel, each vote with its tokens; a model answering prose is not a vote', async () => {
    const account = await ctx.createAccount({ mode: 'live', balanceUsd: '1.00' });
    const response = await submit(ctx, account.key, question());
    expect(response.statusCode).toBe(200);
    const requestId = response.json().requestId as string;
    await testQueue(ctx).drain();
    const record = (await poll(ctx, account.key, requestId)).json();
    expect(record.result).toMatchObject({
      winningOutcomeIndex: 0,
      winningOutcomeLabel: 'Yes',
      agreement: 0.75,
      confidence: 0.8,
      canDetermine: true,
      reasoning:
        'openai/gpt-4.1-mini: NASA confirmed the splashdown.\n' +
        'anthropic/claude-sonnet-4-5: Splashdown on April 10.\n' +
        'xai/grok-4: Reported widely.',
      modelsUsed: [
        'openai/gpt-4.1-mini',
        'anthropic/claude-sonnet-4-5',
        'google/gemini-2.5-flash',
        'xai/grok-4',
      ],
    });
    expect(record.votes[0]).toEqual({
      model: 'openai/gpt-4.1-mini',
      outcomeIndex: 0,
      confidence: 0.9,
      reasoning: 'NASA confirmed the splashdown.',
      latencyMs: expect.any(Number),
      error: null,
      usage: { inputTokens: 400, outputTokens: 30 },
      evidence: [],
      // Web search is off for these fakes (fakeSlotsEnv): OpenAI made none.
      searches: 0,
      abstainReason: null,
      search: 'off',
    });
    expect(record.votes[2]).toMatchObject({
      model: 'google/gemini-2.5-flash',
      outcomeIndex: null,
      error: { kind: 'bad_response', message: 'the answer is not a JSON object' },
    });
  });

  it('polling is free; another account’s request and an unknown id are 404 NOT_FOUND on both paths', async () => {
    const owner = await ctx.createAccount({ balanceUsd: '1.00' });
    const other = await ctx.createAccount({ balanceUsd: '1.00' });
    const requestId = (await submit(ctx, owner.key, question())).json().requestId as string;
    for (const alias of [false, true]) {
      const response = await poll(ctx, other.key, requestId, alias);
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({
        error: `AI request ${requestId} not found`,
        code: 'NOT_FOUND',
        requestId: response.headers['x-request-id'],
      });
      expect((await poll(ctx, owner.key, 'req_unknown', alias)).statusCode).toBe(404);
      expect((await poll(ctx, owner.key, requestId, alias)).statusCode).toBe(200);
    }
    expect(await balanceOf(ctx.database.db, owner.accountId)).toBe(750_000n);
    expect(await balanceOf(ctx.database.db, other.accountId)).toBe(1_000_000n);
    await testQueue(ctx).drain();
  });

  it('402 when the balance cannot pay: no row, no charge', async () => {
    const account = await ctx.createAccount({ balanceUsd: '0.20' });
    const response = await submit(ctx, account.key, question());
    expect(response.statusCode).toBe(402);
    expect(response.json()).toEqual({
      error: 'The balance cannot pay for this request (0.25 USD)',
      code: 'INSUFFICIENT_BALANCE',
      details: { costUsd: '0.25', balanceUsd: '0.20' },
      requestId: response.headers['x-request-id'],
    });
    const [row] = await ctx.database.db.query('SELECT 1 FROM ai_requests WHERE account_id = $1', [
      account.accountId,
    ]);
    expect(row).toBeUndefined();
  });

  it('403 without the ai permission, on every AI route, for free', async () => {
    const account = await ctx.createAccount({ balanceUsd: '1.00', permissions: ['price', 'account'] });
    for (const response of [
      await submit(ctx, account.key, question()),
      await poll(ctx, account.key, 'req_x'),
      await poll(ctx, account.key, 'req_x', true),
    ]) {
      expect(response.statusCode).toBe(403);
      expect(response.json()).toMatchObject({ code: 'PERMISSION_DENIED', details: { required: 'ai' } });
    }
    expect(await balanceOf(ctx.database.db, account.accountId)).toBe(1_000_000n);
  });
});

describe('AI availability', () => {
  it('a live account on a deployment with fewer than four models: 503 AI_UNAVAILABLE, not charged; sandbox still works', async () => {
    const partial = await createTestContext({
      database: ctx.database,
      config: fakeSlotsEnv(fakes, { AI_MODEL_3_API_KEY: '' }),
    });
    try {
      const live = await partial.createAccount({ mode: 'live', balanceUsd: '1.00' });
      const response = await submit(partial, live.key, question());
      expect(response.statusCode).toBe(503);
      expect(response.headers['retry-after']).toBe('300');
      expect(response.json()).toEqual({
        error: 'AI resolution is not available on this deployment: fewer than four models are configured',
        code: 'AI_UNAVAILABLE',
        details: { configuredModels: 3, requiredModels: 4 },
        requestId: response.headers['x-request-id'],
      });
      expect(await balanceOf(partial.database.db, live.accountId)).toBe(1_000_000n);
      const sandbox = await partial.createAccount({ balanceUsd: '1.00' });
      expect((await submit(partial, sandbox.key, question())).statusCode).toBe(200);

      const ready = await partial.request(null, { method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(200);
      expect(ready.json()).toEqual({
        status: 'ready',
        ai: {
          live: 'unavailable',
          models: [
            { slot: 1, model: 'openai/gpt-4.1-mini', configured: true },
            { slot: 2, model: 'anthropic/claude-sonnet-4-5', configured: true },
            {
              slot: 3,
              model: 'google/gemini-2.5-flash',
              configured: false,
              reason: 'AI_MODEL_3_API_KEY is not set',
            },
            { slot: 4, model: 'xai/grok-4', configured: true },
          ],
        },
        deposits: { watcher: 'off', lastPollAt: null, lastSuccessAt: null, lastError: null, lagSlots: null },
      });
      // Readiness is about the database; keys and hosts of the providers are never shown.
      expect(ready.body).not.toContain('sk-test');
      expect(ready.body).not.toContain('127.0.0.1');
    } finally {
      await partial.close();
      await testQueue(ctx).drain();
    }
  });
});
