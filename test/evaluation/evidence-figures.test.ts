import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliOn } from '../helpers/cli.js';
import { createTestContext, type TestContext } from '../helpers/context.js';

/**
 * `sibyl ai evaluate`'s evidence figures (docs/ai.md#the-report) on the sandbox models, steered by
 * their directives, and `--search off` reaching the models: the sandbox models' web search is off
 * with it, as a live slot's is, and its answers are cached apart from the default run's.
 */

const SET = [
  // Determined, right, citing the sandbox's web source: 4 searches.
  { id: 'q1', context: '[sandbox:votes=0,0,0,0]', answer: 'Yes' },
  // Determined, wrong, citing nothing.
  { id: 'q2', context: '[sandbox:votes=0,0,0,0] [sandbox:evidence=none]', answer: 'No' },
  // Determined, right, citing only Sibyl's stored price: 4 tool calls.
  {
    id: 'q3',
    context: '[sandbox:votes=1,1,1,1] [sandbox:evidence=none] [sandbox:price=SOL@2026-06-15T05:30:00Z]',
    answer: 'No',
  },
  // Not determined (all abstain), citing the web source: 4 searches.
  { id: 'q4', context: '[sandbox:votes=?,?,?,?]', answer: null },
].map((q) => ({ ...q, question: `Question ${q.id}?`, outcomes: ['Yes', 'No'], category: 'test' }));

let ctx: TestContext;
let dir: string;
let setPath: string;

beforeAll(async () => {
  ctx = await createTestContext();
  dir = await mkdtemp(join(tmpdir(), 'sibyl-evidence-figures-'));
  setPath = join(dir, 'set.jsonl');
  await writeFile(setPath, `${SET.map((q) => JSON.stringify(q)).join('\n')}\n`);
  // One stored candle: what the models' sibyl_price calls find in the command's database.
  await ctx.database.db.query(
    `INSERT INTO venue_candles (token_key, bucket_interval, open_time, venue, open, high, low, close, volume_usd)
     VALUES ('SOL', '1h', '2026-06-15T05:00:00Z', 'binance', 150, 151, 149, 150.5, 1000)`,
  );
});

afterAll(async () => {
  await ctx?.close();
});

async function evaluate(out: string, extra: string[] = []) {
  const result = await runCliOn(
    ctx.database.db,
    [
      'ai',
      'evaluate',
      setPath,
      '--models',
      'sandbox',
      '--out',
      join(dir, out),
      '--cache',
      join(dir, 'cache.jsonl'),
      '--json',
      ...extra,
    ],
    {},
  );
  expect(result.status, result.stderr + result.stdout).toBe(0);
  return JSON.parse(await readFile(join(dir, out), 'utf8'));
}

describe('sibyl ai evaluate: evidence, searches and tool calls', () => {
  it('reports the share of determined answers with evidence, accuracy with and without, searches and tool calls', async () => {
    const report = await evaluate('on.json');
    expect(report).toMatchObject({
      evaluated: 4,
      determined: 3,
      correct: 2,
      answers: { asked: 16, cached: 0 },
    });
    // With evidence: q1 (web) and q3 (Sibyl's price), both right; without: q2, wrong.
    // Searches: 4 (q1) + 4 (q4) over 4 questions; tool calls: 4 (q3) over 4 questions.
    expect(report.evidence).toEqual({
      search: 'on',
      determinedWithEvidence: 2,
      shareWithEvidence: 0.666667,
      accuracyWithEvidence: 1,
      accuracyWithoutEvidence: 0,
      searchesPerQuestion: 2,
      toolCallsPerQuestion: 1,
    });
    const markdown = await readFile(join(dir, 'on.md'), 'utf8');
    expect(markdown).toContain('| Determined answers citing evidence | 66.7% (2 of 3) |');
    expect(markdown).toContain('| Accuracy with / without evidence | 100.0% / 0.0% |');
    expect(markdown).toContain('| Web searches / Sibyl tool calls per question | 2 / 1 (web search on) |');
    // The tool calls read the command's database: each q3 answer cached cites the stored candle.
    const cached = (await readFile(join(dir, 'cache.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).vote)
      .filter((vote) => vote.evidence.some((e: { kind: string }) => e.kind === 'sibyl'));
    expect(cached).toHaveLength(4);
    for (const vote of cached) {
      expect(vote.evidence).toEqual([
        {
          kind: 'sibyl',
          tool: 'sibyl_price',
          input: { symbol: 'SOL', at: '2026-06-15T05:30:00Z' },
          output: expect.objectContaining({
            status: 'ok',
            interval: '1h',
            price: 150.5,
            sources: ['binance'],
          }),
        },
      ]);
    }
  });

  it('--search off reaches the models (no web source, no search), and is cached apart from the default run', async () => {
    const report = await evaluate('off.json', ['--search', 'off']);
    // Asked again, not taken from the default run's answers.
    expect(report.answers).toEqual({ asked: 16, cached: 0 });
    // Only q3 cites anything now (Sibyl's price: the tools stay on).
    expect(report.evidence).toEqual({
      search: 'off',
      determinedWithEvidence: 1,
      shareWithEvidence: 0.333333,
      accuracyWithEvidence: 1,
      accuracyWithoutEvidence: 0.5,
      searchesPerQuestion: 0,
      toolCallsPerQuestion: 1,
    });
    // Each setting's answers are in the cache: a rerun of either asks nothing.
    expect((await evaluate('on-again.json')).answers).toEqual({ asked: 0, cached: 16 });
    expect((await evaluate('off-again.json', ['--search', 'off'])).answers).toEqual({ asked: 0, cached: 16 });
  });

  it('--search takes on or off', async () => {
    const result = await runCliOn(
      ctx.database.db,
      ['ai', 'evaluate', setPath, '--models', 'sandbox', '--out', join(dir, 'x.json'), '--search', 'maybe'],
      {},
    );
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("--search takes on (the providers' own web search as configured) or off");
  });
});
