import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildReport } from '../../src/evaluation/report.js';
import { publishScorecard } from '../../src/evaluation/scorecard.js';
import { scorecardSummary } from '../../src/evaluation/summary.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';

/**
 * One published scorecard per mode (docs/ai.md#the-published-scorecard): a sandbox evaluation,
 * published, is what sandbox keys see, never what live keys see, and the other way round.
 */

let ctx: TestContext;
let live: TestAccount;
let sandbox: TestAccount;

beforeAll(async () => {
  ctx = await createTestContext();
  live = await ctx.createAccount({ mode: 'live', permissions: ['price'] });
  sandbox = await ctx.createAccount({ mode: 'sandbox', permissions: ['price'] });
});

afterAll(async () => {
  await ctx?.close();
});

function summaryOf(mode: 'live' | 'sandbox', models: string[], target: number) {
  const now = ctx.clock.now();
  return scorecardSummary(
    buildReport([], {
      set: { format: 'jsonl', questions: [], skipped: {} },
      mode,
      modelsUsed: models,
      confidenceThreshold: 0.75,
      target,
      interrupted: false,
      startedAt: now,
      finishedAt: now,
      cachedAnswers: 0,
      askedAnswers: 0,
    }),
  );
}

async function scorecard(account: TestAccount) {
  const response = await ctx.request(account.key, { method: 'GET', url: '/api/v1/ai/scorecard' });
  return { status: response.statusCode, body: response.json() };
}

const SANDBOX_MODELS = ['sandbox/alpha', 'sandbox/beta', 'sandbox/gamma', 'sandbox/delta'];
const LIVE_MODELS = [
  'openai/gpt-4.1-mini',
  'anthropic/claude-haiku',
  'google/gemini-flash',
  'xai/grok-3-mini',
];

describe('GET /ai/scorecard answers the scorecard of the key’s mode', () => {
  it('a sandbox publish never reaches live keys; a live publish never reaches sandbox keys', async () => {
    await publishScorecard(ctx.database.db, summaryOf('sandbox', SANDBOX_MODELS, 0.9));
    expect(await scorecard(sandbox)).toMatchObject({
      status: 200,
      body: { mode: 'sandbox', modelsUsed: SANDBOX_MODELS, target: 0.9 },
    });
    const none = await scorecard(live);
    expect(none.status).toBe(404);
    expect(none.body).toEqual({
      error: 'No AI scorecard has been published yet',
      code: 'NOT_FOUND',
      requestId: expect.any(String),
    });

    await publishScorecard(ctx.database.db, summaryOf('live', LIVE_MODELS, 0.97));
    // A newer sandbox one (published after it) does not replace the live one either.
    await publishScorecard(ctx.database.db, summaryOf('sandbox', SANDBOX_MODELS, 0.8));
    expect(await scorecard(live)).toMatchObject({
      status: 200,
      body: { mode: 'live', modelsUsed: LIVE_MODELS, target: 0.97 },
    });
    expect(await scorecard(sandbox)).toMatchObject({
      status: 200,
      body: { mode: 'sandbox', modelsUsed: SANDBOX_MODELS, target: 0.8 },
    });
  });
});
