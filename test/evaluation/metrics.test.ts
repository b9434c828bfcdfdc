import { describe, expect, it } from 'vitest';
import type { Vote } from '../../src/ai/index.js';
import { reportMarkdown } from '../../src/evaluation/markdown.js';
import {
  calibration,
  percentile,
  type QuestionResult,
  thresholdTable,
} from '../../src/evaluation/metrics.js';
import { createProgress, progressLine } from '../../src/evaluation/progress.js';
import { reliabilitySvg } from '../../src/evaluation/reliability-svg.js';
import { buildReport } from '../../src/evaluation/report.js';

const MODELS = ['p1/m1', 'p2/m2', 'p3/m3', 'p4/m4'];

/** `0.9` votes outcome 0 at 0.9; `[1, 0.6]` outcome 1 at 0.6; `null` "cannot determine"; `'x'` a failure. */
type Spec = [number | null, number] | 'x';

function votes(...specs: Spec[]): Vote[] {
  return specs.map((spec, position) => ({
    position,
    model: MODELS[position] as string,
    outcomeIndex: spec === 'x' ? null : spec[0],
    confidence: spec === 'x' ? null : spec[1],
    reasoning: spec === 'x' ? null : 'because',
    latencyMs: 100 * (position + 1),
    error: spec === 'x' ? { kind: 'timeout', message: 'no answer' } : null,
    usage: spec === 'x' ? null : { inputTokens: 100, outputTokens: 10 },
    evidence: [],
    searches: null,
    search: null,
    abstainReason: spec !== 'x' && spec[0] === null ? 'insufficient_evidence' : null,
  }));
}

const q = (id: string, category: string, answer: number | null, v: Vote[]): QuestionResult => ({
  id,
  category,
  outcomes: ['Yes', 'No'],
  answer,
  votes: v,
});

/**
 * Five questions whose every figure is computed by hand in the comments below.
 * Q1 4/4 on the answer at 0.9 → determined, right. Q2 3/4 on the wrong outcome at 0.8 → determined,
 * wrong. Q3 3/4 on the answer at 0.7 (one failure) → below 0.75: low_confidence. Q4 two failures →
 * FAILED. Q5 three "cannot determine" and one vote for the answer → split.
 */
const RESULTS = [
  q('q1', 'a', 0, votes([0, 0.9], [0, 0.9], [0, 0.9], [0, 0.9])),
  q('q2', 'a', 1, votes([0, 0.8], [0, 0.8], [0, 0.8], [1, 0.6])),
  q('q3', 'b', 0, votes([0, 0.7], [0, 0.7], [0, 0.7], 'x')),
  q('q4', 'b', null, votes([0, 0.6], [1, 0.6], 'x', 'x')),
  q('q5', 'b', 1, votes([null, 0.5], [null, 0.5], [null, 0.5], [1, 0.95])),
];

const run = {
  set: { format: 'jsonl' as const, questions: [], skipped: { '50-50': 2 } },
  mode: 'sandbox' as const,
  modelsUsed: MODELS,
  confidenceThreshold: 0.75,
  target: 0.97,
  interrupted: false,
  startedAt: new Date('2026-11-28T00:00:00Z'),
  finishedAt: new Date('2026-11-28T00:01:00Z'),
  cachedAnswers: 3,
  askedAnswers: 17,
};

describe('the report’s figures, against a hand computation', () => {
  const report = buildReport(RESULTS, run);

  it('accuracy of the determined answers, coverage, agreement levels', () => {
    // Determined: q1 (right) and q2 (wrong) → accuracy 1/2, coverage 2/5.
    expect(report).toMatchObject({ evaluated: 5, determined: 2, correct: 1, accuracy: 0.5, coverage: 0.4 });
    expect(report.byAgreement).toEqual({
      '4/4': { count: 1, accuracy: 1 },
      '3/4': { count: 1, accuracy: 0 },
    });
  });

  it('abstentions by reason', () => {
    expect(report.abstentions).toEqual({
      count: 3,
      reasons: { failed: 1, no_outcome: 0, split: 1, low_confidence: 1 },
    });
  });

  it('each model alone, over the questions it answered validly', () => {
    // m1: q1 0 ✓, q2 0 ✗, q3 0 ✓, q4 0 ✗ (abstain was right), q5 null ✗ → 2/5.
    // m2: the same but q4 1 ✗ → 2/5. m3: q4 failed; 2 of 4. m4: q2 1 ✓, q5 1 ✓, q1 ✓; q3, q4 failed → 3/3.
    expect(report.byModel['p1/m1']).toEqual({
      answered: 5,
      accuracy: 0.4,
      abstained: 1,
      failed: 0,
      failures: {},
      latencyMs: { p50: 100, p99: 100 },
      tokens: { input: 500, output: 50 },
    });
    expect(report.byModel['p2/m2']).toMatchObject({ answered: 5, accuracy: 0.4, abstained: 1, failed: 0 });
    expect(report.byModel['p3/m3']).toMatchObject({
      answered: 4,
      accuracy: 0.5,
      failed: 1,
      failures: { timeout: 1 },
    });
    expect(report.byModel['p4/m4']).toMatchObject({
      answered: 3,
      accuracy: 1,
      abstained: 0,
      failed: 2,
      failures: { timeout: 2 },
    });
  });

  it('by category', () => {
    expect(report.byCategory).toEqual({
      a: { questions: 2, determined: 2, coverage: 1, accuracy: 0.5 },
      b: { questions: 3, determined: 0, coverage: 0, accuracy: null },
    });
  });

  it('Brier score and expected calibration error of the consensus confidence', () => {
    // Completed with a winner: q1 (0.9 ✓), q2 (0.8 ✗), q3 (0.7 ✓), q5 (0.95 ✓); q4 FAILED is left out.
    // Brier = (0.1² + 0.8² + 0.3² + 0.05²) / 4 = 0.7425 / 4 = 0.185625.
    // ECE: bin 0.9 {0.9, 0.95}: |1 − 0.925| × 2/4 = 0.0375; bin 0.8: |0 − 0.8| × 1/4 = 0.2;
    // bin 0.7: |1 − 0.7| × 1/4 = 0.075 → 0.3125.
    expect(report.calibrated).toBe(4);
    expect(report.brier).toBeCloseTo(0.185625, 6);
    expect(report.ece).toBeCloseTo(0.3125, 6);
    const filled = report.reliability.filter((b) => b.count > 0);
    expect(filled).toEqual([
      { from: 0.7, to: 0.8, count: 1, confidence: 0.7, accuracy: 1 },
      { from: 0.8, to: 0.9, count: 1, confidence: 0.8, accuracy: 0 },
      { from: 0.9, to: 1, count: 2, confidence: 0.925, accuracy: 1 },
    ]);
  });

  it('latency, tokens and cost', () => {
    // Every question's slowest model is slot 4 at 400 ms.
    expect(report.latencyMs).toEqual({ p50: 400, p99: 400 });
    // 17 valid answers of 100 in / 10 out.
    expect(report.tokens).toEqual({ input: 1700, output: 170 });
    expect(report.costUsd).toBeNull();
    const priced = buildReport(RESULTS, {
      ...run,
      prices: new Map(MODELS.map((m) => [m, { input: 1, output: 10 }])),
    });
    // (1700 × 1 + 170 × 10) / 10⁶ USD.
    expect(priced.costUsd).toBe(0.0034);
    const partly = buildReport(RESULTS, { ...run, prices: new Map([['p1/m1', { input: 1, output: 1 }]]) });
    expect(partly.costUsd).toBeNull();
  });

  it('the threshold table names the lowest threshold reaching the target', () => {
    // ≤ 0.70: q1, q2, q3 determined (2 right); 0.75–0.80: q1, q2; 0.85–0.90: q1; 0.95: none.
    const two3 = 2 / 3;
    expect(report.thresholds.map((t) => [t.threshold, t.determined, t.coverage, t.accuracy])).toEqual([
      [0.5, 3, 0.6, expect.closeTo(two3, 6)],
      [0.55, 3, 0.6, expect.closeTo(two3, 6)],
      [0.6, 3, 0.6, expect.closeTo(two3, 6)],
      [0.65, 3, 0.6, expect.closeTo(two3, 6)],
      [0.7, 3, 0.6, expect.closeTo(two3, 6)],
      [0.75, 2, 0.4, 0.5],
      [0.8, 2, 0.4, 0.5],
      [0.85, 1, 0.2, 1],
      [0.9, 1, 0.2, 1],
      [0.95, 0, 0, null],
    ]);
    expect(report.recommendedThreshold).toBe(0.85);
    expect(thresholdTable(RESULTS, 0.6).recommendedThreshold).toBe(0.5);
    expect(thresholdTable(RESULTS.slice(1, 2), 0.5).recommendedThreshold).toBeNull();
  });

  it('an empty run has null shares, not NaN', () => {
    const empty = buildReport([], run);
    expect(empty).toMatchObject({
      accuracy: null,
      coverage: null,
      brier: null,
      ece: null,
      recommendedThreshold: null,
    });
    expect(empty.latencyMs).toEqual({ p50: null, p99: null });
  });

  it('the Markdown page and the SVG diagram carry the figures', () => {
    const md = reportMarkdown(report, 'report.svg');
    expect(md).toContain('| Accuracy of determined answers | 50.0% (1 of 2) |');
    expect(md).toContain('| Coverage (share determined) | 40.0% (2 of 5) |');
    expect(md).toContain('| 0.85 ◀ | 1 | 20.0% | 100.0% |');
    expect(md).toContain('The lowest threshold reaching the target accuracy of 97.0% is **0.85**.');
    expect(md).toContain('Skipped from the set: 2 50-50.');
    expect(md).toContain('![Reliability diagram](report.svg)');
    const svg = reliabilitySvg(report.reliability, 'Reliability');
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    // One bar per non-empty bin; the 0.8 bin's bar has no height (nothing right).
    expect(svg.match(/fill="#4f6bed"/g)).toHaveLength(3);
    expect(svg).toContain('<title>0.9–1.0: 2 answers, 100.0% right</title>');
  });
});

describe('the small pieces', () => {
  it('nearest-rank percentiles', () => {
    const hundred = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(percentile(hundred, 0.5)).toBe(50);
    expect(percentile(hundred, 0.99)).toBe(99);
    expect(percentile([7], 0.99)).toBe(7);
    expect(percentile([], 0.5)).toBeNull();
  });

  it('a perfectly calibrated set has ECE 0; a confident wrong one has Brier 1', () => {
    // 6 right of 8 at 0.75: accuracy equals confidence.
    const pairs = Array.from({ length: 8 }, (_, i) => ({ confidence: 0.75, right: i < 6 }));
    expect(calibration(pairs).ece).toBe(0);
    expect(calibration([{ confidence: 1, right: false }]).brier).toBe(1);
    // Confidence 1.0 falls in the last bin, not an eleventh.
    expect(calibration([{ confidence: 1, right: true }]).reliability[9]?.count).toBe(1);
  });

  it('the progress line: count, share, rate, time left; a bar on a terminal, a line a tenth otherwise', () => {
    expect(progressLine(250, 1000, 10_000, false)).toBe('250/1000 questions 25%  25.0/s  ETA 0:30');
    expect(progressLine(0, 10, 0, true)).toBe('[........................] 0/10 questions 0%  0.0/s  ETA --');
    const lines: string[] = [];
    let t = 0;
    const plain = createProgress(20, { tty: false, write: (s) => lines.push(s) }, () => t);
    for (let done = 1; done <= 20; done++) {
      t += 100;
      plain.tick(done);
    }
    plain.end();
    expect(lines).toHaveLength(10);
    expect(lines[9]).toBe('20/20 questions 100%  10.0/s  ETA 0:00\n');
    const drawn: string[] = [];
    const tty = createProgress(3, { tty: true, write: (s) => drawn.push(s) }, () => 500);
    tty.tick(1);
    tty.tick(2); // within 100 ms of the last drawing: skipped
    tty.tick(3); // the last one is always drawn
    tty.end();
    expect(drawn).toHaveLength(3);
    expect(drawn[0]).toMatch(/^\r\[#{8}\.{16}\] 1\/3 questions 33%/);
    expect(drawn[2]).toBe('\n');
  });
});
