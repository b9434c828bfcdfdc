import { createHash } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { decideConsensus, type Vote } from '../../src/ai/index.js';
import { openAnswerCache } from '../../src/evaluation/cache.js';
import { evaluateSet } from '../../src/evaluation/evaluate.js';
import type { LabelledQuestion } from '../../src/evaluation/labelled-set.js';
import type { QuestionResult } from '../../src/evaluation/metrics.js';
import { openLabelledSet, readLabelledSet } from '../../src/evaluation/read-set.js';
import { buildReport, questionLine, ReportTally } from '../../src/evaluation/report.js';
import * as oracle from './oracle/report-from-arrays.js';

/**
 * `sibyl ai evaluate` keeps nothing per question (docs/ai.md#evaluating-a-large-set): the set is
 * streamed, each result is added to a tally and dropped, the cache is read back from its file.
 * These check that this changes no figure: against the report computed from arrays of every
 * result (the implementation it replaced, kept in ./oracle as the reference).
 */

const MODELS = ['p1/m1', 'p2/m2', 'p3/m3', 'p4/m4'];
const FAILURES = ['timeout', 'schema', 'http_error'] as const;

/** A deterministic pseudo-random sequence (a linear congruential generator). */
function sequence(seed: number) {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

function fixedResults(n: number): QuestionResult[] {
  const next = sequence(7);
  return Array.from({ length: n }, (_, i) => {
    const outcomes = next() < 0.7 ? ['Yes', 'No'] : ['A', 'B', 'C'];
    const answer = next() < 0.1 ? null : Math.floor(next() * outcomes.length);
    const votes: Vote[] = MODELS.map((model, position) => {
      const roll = next();
      const failed = roll < 0.08;
      return {
        position,
        model,
        outcomeIndex: failed
          ? null
          : roll < 0.14
            ? null
            : roll < 0.75
              ? (answer ?? 0)
              : Math.floor(next() * outcomes.length),
        confidence: failed ? null : Math.round((0.4 + next() * 0.6) * 100) / 100,
        reasoning: failed ? null : 'because',
        latencyMs: Math.floor(next() * 3000),
        error: failed ? { kind: FAILURES[Math.floor(next() * 3)] as string, message: 'x' } : null,
        usage: failed ? null : { inputTokens: 300 + Math.floor(next() * 100), outputTokens: 20 + (i % 7) },
        // Evidence on about a third of the answers, a Sibyl tool call on a fifth, searches unknown on a quarter.
        evidence: failed
          ? []
          : [
              ...((i + position) % 3 === 0
                ? [{ kind: 'web', url: 'https://example.com/', title: 't', quote: null, retrievedAt: '' }]
                : []),
              ...((i + position) % 5 === 0
                ? [{ kind: 'sibyl', tool: 'sibyl_price', input: {}, output: { status: 'no_data' } }]
                : []),
            ],
        searches: failed || (i + position) % 4 === 0 ? null : (i + position) % 3,
      } as Vote;
    });
    return {
      id: `q${i}`,
      category: ['sports', 'crypto', 'weather', 'politics'][i % 4] as string,
      outcomes,
      answer,
      votes,
    };
  });
}

const run = {
  set: { format: 'jsonl' as const, questions: { length: 1200 }, skipped: {} },
  mode: 'sandbox' as const,
  modelsUsed: MODELS,
  confidenceThreshold: 0.75,
  target: 0.9,
  interrupted: false,
  startedAt: new Date('2026-11-28T00:00:00Z'),
  finishedAt: new Date('2026-11-28T00:10:00Z'),
  cachedAnswers: 0,
  askedAnswers: 4800,
  prices: new Map(MODELS.map((m) => [m, { input: 0.4, output: 1.6 }])),
};

describe('the streamed report', () => {
  const results = fixedResults(1200);

  it('equals the report computed from arrays of every result, figure for figure', () => {
    const tally = new ReportTally(MODELS, 0.75);
    for (const r of results) tally.add(r);
    const expected = oracle.buildReport(results, { ...run, set: { ...run.set, questions: new Array(1200) } });
    expect(tally.report(run)).toEqual(expected);
    expect(buildReport(results, run)).toEqual(expected);
    // The fixed set reaches every branch the figures have.
    expect(expected.determined).toBeGreaterThan(100);
    expect(expected.abstentions.count).toBeGreaterThan(100);
    expect(expected.byAgreement['3/4'].count).toBeGreaterThan(0);
    expect(expected.byAgreement['4/4'].count).toBeGreaterThan(0);
    expect(expected.evidence.determinedWithEvidence).toBeGreaterThan(100);
    expect(expected.determined - expected.evidence.determinedWithEvidence).toBeGreaterThan(5);
    expect(expected.evidence.toolCallsPerQuestion).toBeGreaterThan(0);
  });

  it('writes each question line as the array version did', () => {
    expect(results.map((r) => questionLine(r, decideConsensus(r.votes, r.outcomes, 0.75)))).toEqual(
      oracle.questionLines(results, 0.75),
    );
  });

  it('an empty tally reports as an empty array did', () => {
    expect(new ReportTally(MODELS, 0.75).report(run)).toEqual(
      oracle.buildReport([], { ...run, set: { ...run.set, questions: new Array(1200) } }),
    );
  });
});

describe('a JSON Lines set read as a stream', () => {
  const SET = fileURLToPath(new URL('./sets/sibyl.jsonl', import.meta.url));

  it('gives the questions reading it whole gives, in order', async () => {
    const whole = await readLabelledSet([SET]);
    const opened = await openLabelledSet([SET]);
    const streamed: LabelledQuestion[] = [];
    for await (const q of opened.questions()) streamed.push(q);
    expect(opened.count).toBe(whole.questions.length);
    expect(streamed).toEqual(whole.questions);
  });

  it('is checked whole before any question is given: a bad last line is an error naming it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sibyl-stream-'));
    const bad = join(dir, 'bad.jsonl');
    const lines = (await readFile(SET, 'utf8')).trim().split('\n');
    await writeFile(bad, `${lines.join('\n')}\n${lines[0]}\n`);
    await expect(openLabelledSet([bad])).rejects.toThrow(/line 45, "id": repeats the id of line 1/);
  });
});

describe('evaluateSet', () => {
  it('hands every result on in the set’s order whatever order they finish in, and keeps none', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sibyl-stream-'));
    const cache = await openAnswerCache(join(dir, 'cache.jsonl'));
    const questions = Array.from({ length: 40 }, (_, i) => ({
      id: `q${i}`,
      question: `Question ${i}?`,
      outcomes: ['Yes', 'No'],
      context: '',
      answer: 0,
      category: 'c',
    }));
    const seen: string[] = [];
    const resolver = {
      models: () => MODELS.map((name) => ({ name })),
      resolve: async (_mode: unknown, data: { question: string }) => {
        const n = Number(/\d+/.exec(data.question)?.[0]);
        // Later questions finish first now and then.
        await new Promise((r) => setTimeout(r, (n * 7) % 5));
        return { votes: [] as Vote[] };
      },
    } as unknown as Parameters<typeof evaluateSet>[0]['resolver'];
    async function* stream() {
      for (const q of questions) yield q;
    }
    const evaluation = await evaluateSet({
      resolver,
      mode: 'sandbox',
      questions: stream(),
      concurrency: 8,
      confidenceThreshold: 0.75,
      cache,
      onResult: (r) => {
        seen.push(r.id);
      },
    });
    await cache.close();
    expect(seen).toEqual(questions.map((q) => q.id));
    expect(evaluation).toMatchObject({ answered: 40, interrupted: false });
  });
});

describe('the answer cache', () => {
  it('answers what was put, after reopening too; a damaged last line is skipped and not glued to', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sibyl-cache-'));
    const path = join(dir, 'cache.jsonl');
    const vote = (i: number): Vote => ({
      position: i % 4,
      model: MODELS[i % 4] as string,
      outcomeIndex: i % 2,
      confidence: 0.9,
      reasoning: `reason ${i} — ünïcode`,
      latencyMs: i,
      error: null,
      usage: null,
      evidence: [],
      searches: null,
      search: null,
      abstainReason: null,
    });
    const key = (i: number) => createHash('sha256').update(String(i)).digest('base64url');
    const first = await openAnswerCache(path);
    for (let i = 0; i < 3000; i++) first.put(key(i % 2500), vote(i));
    expect(first.get(key(1))).toEqual(vote(2501));
    await first.close();
    await writeFile(path, `${await readFile(path, 'utf8')}{"k":"cut`);

    const again = await openAnswerCache(path);
    expect(again.get(key(7))).toEqual(vote(2507));
    expect(again.get(key(2499))).toEqual(vote(2499));
    expect(again.get(key(10))).toEqual(vote(2510));
    expect(again.get(key(99_999))).toBeUndefined();
    again.put(key(2600), vote(9));
    await again.close();
    const third = await openAnswerCache(path);
    expect(third.get(key(2600))).toEqual(vote(9));
    await third.close();
  });
});
