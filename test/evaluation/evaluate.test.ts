import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { type FakeLlm, type FakeReply, fakeSlotsEnv, startFakeLlm } from '../ai/fake-llm.js';
import { runCliOn } from '../helpers/cli.js';
import { createTestContext, type TestContext } from '../helpers/context.js';

/**
 * `sibyl ai evaluate` on the project's own 44-question set, against four fake providers on loopback
 * answering in their own wire formats: OpenAI and Anthropic always right, Google wrong on every
 * fourth question, xAI timing out on q01–q03 and answering prose on q05–q07. Every figure of the
 * report is checked against the hand computation in the comments.
 */

const SET = fileURLToPath(new URL('./sets/sibyl.jsonl', import.meta.url));
const lines = (await readFile(SET, 'utf8')).trim().split('\n');
const KEY = new Map(
  lines.map((line) => {
    const q = JSON.parse(line) as { id: string; question: string; outcomes: string[]; answer: string | null };
    return [
      q.question,
      {
        n: Number(q.id.slice(1)),
        answer: q.answer === null ? null : q.outcomes.indexOf(q.answer),
        count: q.outcomes.length,
      },
    ];
  }),
);

/** The question a provider was asked: the data block's JSON, the line after its opening marker. */
function asked(body: string): { n: number; answer: number | null; count: number } {
  const match =
    /<resolution_data>\\n(.*?)\\n<\/resolution_data>|<resolution_data>\n(.*?)\n<\/resolution_data>/s.exec(
      body,
    );
  const text = match?.[1] ? JSON.parse(`"${match[1]}"`) : match?.[2];
  const question = (JSON.parse(text as string) as { question: string }).question;
  const entry = KEY.get(question);
  if (!entry) throw new Error(`unknown question ${question}`);
  return entry;
}

const answer = (outcomeIndex: number | null, confidence: number): FakeReply => ({
  answer: { outcomeIndex, confidence, reasoning: 'From the record.' },
});

let stopAfter: { calls: number; controller: AbortController } | null = null;
let openaiCalls = 0;

const BEHAVIOUR: ((q: { n: number; answer: number | null; count: number }) => FakeReply)[] = [
  (q) => answer(q.answer, 0.9),
  (q) => answer(q.answer, 0.8),
  // Often wrong: every fourth question gets the next outcome (outcome 0 where none is right).
  (q) => answer(q.n % 4 === 0 ? (q.answer === null ? 0 : (q.answer + 1) % q.count) : q.answer, 0.7),
  (q) =>
    q.n <= 3
      ? { hangMs: 600_000 }
      : q.n >= 5 && q.n <= 7
        ? { prose: 'It is Yes, surely.' }
        : answer(q.answer, 0.95),
];

let fakes: FakeLlm[] = [];
let ctx: TestContext;
let env: Record<string, string>;
let dir: string;

beforeAll(async () => {
  fakes = await Promise.all(
    (['openai', 'anthropic', 'google', 'xai'] as const).map((kind, slot) =>
      startFakeLlm(kind, (request) => {
        if (slot === 0) {
          openaiCalls++;
          if (stopAfter && openaiCalls === stopAfter.calls) stopAfter.controller.abort();
        }
        return (BEHAVIOUR[slot] as (typeof BEHAVIOUR)[number])(asked(request.body));
      }),
    ),
  );
  env = fakeSlotsEnv(fakes, {
    AI_DEADLINE_MS: '30000',
    AI_LEASE_MS: '31000',
    AI_RETRIES: '0',
    // Long enough for an answer on a loaded machine; the hanging calls never answer within it.
    AI_MODEL_4_TIMEOUT_MS: '15000',
  });
  ctx = await createTestContext({ config: env });
  dir = await mkdtemp(join(tmpdir(), 'sibyl-evaluate-'));
});

afterAll(async () => {
  await ctx?.close();
  for (const fake of fakes) await fake.close();
});

const readJson = async (path: string) => JSON.parse(await readFile(path, 'utf8'));

describe('sibyl ai evaluate', () => {
  it('the scorecard route answers 404 NOT_FOUND before anything is published', async () => {
    const account = await ctx.createAccount({ permissions: ['price'] });
    const response = await ctx.request(account.key, { method: 'GET', url: '/api/v1/ai/scorecard' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({
      code: 'NOT_FOUND',
      error: 'No AI scorecard has been published yet',
    });
  });

  it('runs the 44 questions through the resolver and reports every figure as computed by hand', async () => {
    const out = join(dir, 'report.json');
    const cache = join(dir, 'cache.jsonl');
    const result = await runCliOn(
      ctx.database.db,
      [
        'ai',
        'evaluate',
        SET,
        '--models',
        'live',
        '--out',
        out,
        '--cache',
        cache,
        '--concurrency',
        '6',
        '--publish',
      ],
      env,
    );
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('44 of 44 questions evaluated');
    expect(result.stdout).toContain('accuracy 100.0% of 40 determined, coverage 90.9%');
    const report = await readJson(out);

    // Determined: 24 questions 4/4 (mean confidence (0.9+0.8+0.7+0.95)/4 = 0.8375), 6 at 3/4 where
    // xAI failed (q01–q03, q05–q07: 0.8), 10 at 3/4 where Google was wrong (q04…q40: 0.8833) — all
    // right. Not determined: q41–q43 (all four "cannot determine": no outcome) and q44 (Google
    // alone votes: split).
    expect(report).toMatchObject({
      mode: 'live',
      modelsUsed: [
        'openai/gpt-4.1-mini',
        'anthropic/claude-sonnet-4-5',
        'google/gemini-2.5-flash',
        'xai/grok-4',
      ],
      confidenceThreshold: 0.75,
      target: 0.97,
      interrupted: false,
      set: { format: 'jsonl', questions: 44, skipped: {} },
      evaluated: 44,
      determined: 40,
      correct: 40,
      accuracy: 1,
      coverage: 0.909091,
      byAgreement: { '4/4': { count: 24, accuracy: 1 }, '3/4': { count: 16, accuracy: 1 } },
      abstentions: { count: 4, reasons: { failed: 0, no_outcome: 3, split: 1, low_confidence: 0 } },
      costUsd: null,
      answers: { cached: 0, asked: 176 },
    });
    // Each model alone: OpenAI and Anthropic 44 of 44 (null on the four to abstain on is right);
    // Google 33 of 44 (wrong on 11); xAI 38 answered, all right, 3 timeouts and 3 prose answers.
    expect(report.byModel['openai/gpt-4.1-mini']).toMatchObject({
      answered: 44,
      accuracy: 1,
      abstained: 4,
      failed: 0,
    });
    expect(report.byModel['anthropic/claude-sonnet-4-5']).toMatchObject({
      answered: 44,
      accuracy: 1,
      failed: 0,
    });
    expect(report.byModel['google/gemini-2.5-flash']).toMatchObject({
      answered: 44,
      accuracy: 0.75,
      abstained: 3,
    });
    expect(report.byModel['xai/grok-4']).toMatchObject({
      answered: 38,
      accuracy: 1,
      abstained: 4,
      failed: 6,
      failures: { timeout: 3, bad_response: 3 },
    });
    // By category: every answerable category fully determined and right; the four to abstain on none.
    for (const category of ['crypto-prices', 'sports', 'politics', 'weather', 'on-chain']) {
      expect(report.byCategory[category]).toMatchObject({ coverage: 1, accuracy: 1 });
    }
    expect(report.byCategory.undeterminable).toEqual({
      questions: 4,
      determined: 0,
      coverage: 0,
      accuracy: null,
    });
    // Calibration over the 41 completed resolutions with a winner: 40 right at 0.8375 (24), 0.8 (6),
    // 0.8833 (10), and q44 wrong at 0.7. Brier = (24·0.1625² + 6·0.2² + 10·0.11667² + 0.7²)/41;
    // ECE = (40·|1 − 0.84333| + 1·|0 − 0.7|)/41.
    expect(report.calibrated).toBe(41);
    expect(report.brier).toBeCloseTo(0.036582, 5);
    expect(report.ece).toBeCloseTo(0.169919, 5);
    expect(report.reliability.filter((b: { count: number }) => b.count > 0)).toEqual([
      { from: 0.7, to: 0.8, count: 1, confidence: 0.7, accuracy: 0 },
      { from: 0.8, to: 0.9, count: 40, confidence: 0.843333, accuracy: 1 },
    ]);
    // Thresholds ≤ 0.80 keep all 40; 0.85 only the 10 at 0.8833; 0.90 and 0.95 none.
    expect(report.thresholds.map((t: { determined: number }) => t.determined)).toEqual([
      40, 40, 40, 40, 40, 40, 40, 10, 0, 0,
    ]);
    expect(report.thresholds[7]).toEqual({
      threshold: 0.85,
      determined: 10,
      coverage: 0.227273,
      accuracy: 1,
    });
    expect(report.thresholds[8]).toEqual({ threshold: 0.9, determined: 0, coverage: 0, accuracy: null });
    expect(report.recommendedThreshold).toBe(0.5);
    // The slowest question waited for xAI's 15,000 ms timeout.
    expect(report.latencyMs.p99).toBeGreaterThanOrEqual(15000);
    // Every successful call reports 371 input and 29 output tokens (the fakes' usage).
    expect(report.byModel['openai/gpt-4.1-mini'].tokens).toEqual({ input: 44 * 371, output: 44 * 29 });
    expect(report.questions).toHaveLength(44);
    expect(report.questions[43]).toMatchObject({
      id: 'q44',
      canDetermine: false,
      abstention: 'split',
      correct: false,
    });

    const markdown = await readFile(join(dir, 'report.md'), 'utf8');
    expect(markdown).toContain('| Accuracy of determined answers | 100.0% (40 of 40) |');
    expect(markdown).toContain('![Reliability diagram](report.svg)');
    expect(await readFile(join(dir, 'report.svg'), 'utf8')).toMatch(/^<svg /);

    // Published (the live models): any live key reads it, whatever its permissions, for free.
    const account = await ctx.createAccount({ mode: 'live', permissions: ['price'], balanceUsd: '0.00' });
    const response = await ctx.request(account.key, { method: 'GET', url: '/api/v1/ai/scorecard' });
    expect(response.statusCode).toBe(200);
    const card = response.json();
    expect(card).toMatchObject({
      accuracy: 1,
      coverage: 0.909091,
      determined: 40,
      brier: report.brier,
      ece: report.ece,
      recommendedThreshold: 0.5,
      byAgreement: report.byAgreement,
      byCategory: report.byCategory,
      evaluatedAt: report.finishedAt,
    });
    expect(card.byModel['google/gemini-2.5-flash']).toEqual({
      answered: 44,
      accuracy: 0.75,
      abstained: 3,
      failed: 0,
    });
    expect(card).not.toHaveProperty('costUsd');
    expect(card).not.toHaveProperty('tokens');
    expect(card).not.toHaveProperty('questions');
  });

  it('a rerun takes every answer from the cache and asks only the models that timed out', async () => {
    const before = fakes.map((f) => f.server.requests.length);
    const out = join(dir, 'rerun.json');
    const result = await runCliOn(
      ctx.database.db,
      [
        'ai',
        'evaluate',
        SET,
        '--models',
        'live',
        '--out',
        out,
        '--cache',
        join(dir, 'cache.jsonl'),
        '--target',
        '0.99',
        '--json',
      ],
      env,
    );
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ evaluated: 44, accuracy: 1, published: null });
    const report = await readJson(out);
    // 44·4 answers less the 3 timeouts (not cached) = 173 from the cache; the 3 asked again.
    expect(report.answers).toEqual({ cached: 173, asked: 3 });
    expect(fakes.map((f, i) => f.server.requests.length - (before[i] as number))).toEqual([0, 0, 0, 3]);
    expect(report.accuracy).toBe(1);
    expect(report.target).toBe(0.99);
  });

  it('Ctrl-C keeps what was answered and writes the report so far, not published', async () => {
    const out = join(dir, 'interrupted.json');
    const controller = new AbortController();
    openaiCalls = 0;
    stopAfter = { calls: 10, controller };
    let stdout = '';
    let stderr = '';
    const status = await runCli(
      [
        'ai',
        'evaluate',
        SET,
        '--models',
        'live',
        '--out',
        out,
        '--cache',
        join(dir, 'fresh-cache.jsonl'),
        '--concurrency',
        '1',
        '--publish',
      ],
      {
        // xAI's hanging calls given up on sooner: this case counts questions, not xAI's answers.
        env: { LOG_LEVEL: 'silent', ...env, AI_MODEL_4_TIMEOUT_MS: '300' },
        stdout: (t) => {
          stdout += t;
        },
        stderr: (t) => {
          stderr += t;
        },
        database: ctx.database.db,
        signal: controller.signal,
      },
    );
    stopAfter = null;
    // One at a time: questions 1–9 answered, the 10th was being asked when Ctrl-C came.
    expect(stderr).toBe('');
    expect(status).toBe(1);
    expect(stdout).toContain('Interrupted: 9 of 44 questions evaluated');
    expect(stdout).toContain('not published: an interrupted evaluation is not a scorecard');
    const report = await readJson(out);
    expect(report).toMatchObject({ interrupted: true, evaluated: 9 });
    expect(report.questions.map((q: { id: string }) => q.id)).toEqual([
      'q01',
      'q02',
      'q03',
      'q04',
      'q05',
      'q06',
      'q07',
      'q08',
      'q09',
    ]);
    // The answers of the nine stay in the cache — at least OpenAI's, Anthropic's and Google's (xAI's
    // may have timed out) — with whatever of the tenth's arrived before the cache was closed.
    const cached = (await readFile(join(dir, 'fresh-cache.jsonl'), 'utf8')).trim().split('\n');
    expect(cached.length).toBeGreaterThanOrEqual(9 * 3);
    expect(cached.length).toBeLessThanOrEqual(10 * 4);
  });

  it('a set with a bad line exits 1 naming the line and field, and writes nothing', async () => {
    const bad = join(dir, 'bad.jsonl');
    await writeFile(
      bad,
      `${lines.slice(0, 2).join('\n')}\n{"id":"z","question":"Q?","outcomes":["Yes","No"],"answer":"Maybe"}\n`,
    );
    const out = join(dir, 'never.json');
    const cache = join(dir, 'never-cache.jsonl');
    const result = await runCliOn(
      ctx.database.db,
      ['ai', 'evaluate', bad, '--models', 'live', '--out', out, '--cache', cache],
      env,
    );
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(`sibyl: ${bad}, line 3, "answer": "Maybe" is not one of the outcomes\n`);
    expect(existsSync(out)).toBe(false);
    expect(existsSync(cache)).toBe(false);
  });

  it('sandbox models, a limit, and usage errors', async () => {
    const out = join(dir, 'sandbox.json');
    const result = await runCliOn(
      ctx.database.db,
      [
        'ai',
        'evaluate',
        SET,
        '--models',
        'sandbox',
        '--limit',
        '5',
        '--out',
        out,
        '--cache',
        join(dir, 'sb.jsonl'),
        '--json',
      ],
      env,
    );
    expect(result.status).toBe(0);
    const report = await readJson(out);
    expect(report).toMatchObject({
      mode: 'sandbox',
      evaluated: 5,
      modelsUsed: ['sandbox/alpha', 'sandbox/beta', 'sandbox/gamma', 'sandbox/delta'],
    });
    // The sandbox models all vote the outcome a hash of the question picks, at 0.9: always 4/4.
    expect(report.byAgreement['4/4'].count).toBe(5);
    for (const args of [
      ['--models', 'other'],
      ['--concurrency', '0'],
      ['--target', '1.5'],
      ['--prices', 'nope'],
    ]) {
      const bad = await runCliOn(ctx.database.db, ['ai', 'evaluate', SET, ...args], env);
      expect(bad.status).toBe(2);
    }
    expect((await runCliOn(ctx.database.db, ['ai', 'judge', SET], env)).stderr).toContain(
      'unknown action "ai judge"',
    );
  });
});
