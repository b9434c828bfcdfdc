import { type Consensus, decideConsensus } from '../ai/index.js';
import type { LabelledSet } from './labelled-set.js';
import {
  type Abstention,
  abstentionOf,
  CalibrationTally,
  isCorrect,
  type QuestionResult,
  round6,
  type Share,
  share,
  THRESHOLDS,
  type ThresholdRow,
} from './metrics.js';

/** USD per million input and output tokens of a model, when the operator gives them. */
export type Prices = ReadonlyMap<string, { input: number; output: number }>;

/** The set as the report names it: its format, what it left out, and its size. */
export interface SetInfo {
  format: LabelledSet['format'];
  skipped: Record<string, number>;
  /** The set's questions, or only their count as `{ length }` (a set read as a stream). */
  questions: { readonly length: number };
}

export interface RunInfo {
  set: SetInfo;
  mode: 'live' | 'sandbox';
  modelsUsed: string[];
  confidenceThreshold: number;
  target: number;
  /** Stopped by Ctrl-C before every question was asked. */
  interrupted: boolean;
  startedAt: Date;
  finishedAt: Date;
  /** Answers taken from the cache and answers asked of the providers in this run. */
  cachedAnswers: number;
  askedAnswers: number;
  prices?: Prices;
  /** `--search`: whether the providers' own web search was on (default on). */
  search?: 'on' | 'off';
}

/** Numbers appended one at a time into a typed array that doubles when full: 8 bytes each. */
export class NumberList {
  private values = new Float64Array(1024);
  length = 0;

  push(value: number): void {
    if (this.length === this.values.length) {
      const bigger = new Float64Array(this.values.length * 2);
      bigger.set(this.values);
      this.values = bigger;
    }
    this.values[this.length++] = value;
  }

  /** The nearest-rank percentile (`q` 0–1), as `percentile` of metrics.ts; null for none. */
  percentile(q: number): number | null {
    if (this.length === 0) return null;
    const sorted = this.values.slice(0, this.length).sort();
    return sorted[Math.max(0, Math.ceil(q * this.length) - 1)] as number;
  }
}

interface ModelTally {
  votes: number;
  valid: number;
  right: number;
  abstained: number;
  failures: Record<string, number>;
  latencies: NumberList;
  input: number;
  output: number;
}

interface Count {
  count: number;
  right: number;
}

/**
 * The report's figures, added up one question at a time (docs/ai.md#the-report): what it keeps does
 * not grow with the set — counts, sums, one tally per model, category and threshold — except the
 * latencies the percentiles need, kept as numbers in typed arrays (8 bytes a vote).
 */
export class ReportTally {
  /** Questions added so far. */
  evaluated = 0;
  private determined = 0;
  private correct = 0;
  private readonly agreement: Record<'4/4' | '3/4', Count> = {
    '4/4': { count: 0, right: 0 },
    '3/4': { count: 0, right: 0 },
  };
  private readonly categories = new Map<string, { questions: number; determined: number; right: number }>();
  private readonly reasons: Record<Abstention, number> = {
    failed: 0,
    no_outcome: 0,
    split: 0,
    low_confidence: 0,
  };
  private readonly calibration = new CalibrationTally();
  private readonly questionLatency = new NumberList();
  private readonly models: ModelTally[];
  private readonly thresholds = THRESHOLDS.map(() => ({ determined: 0, right: 0 }));
  /** Determined answers by whether a vote for the winner cites evidence (docs/ai.md#the-report). */
  private readonly grounded: Record<'with' | 'without', Count> = {
    with: { count: 0, right: 0 },
    without: { count: 0, right: 0 },
  };
  private searches = 0;
  private toolCalls = 0;

  constructor(
    private readonly modelsUsed: readonly string[],
    private readonly confidenceThreshold: number,
  ) {
    this.models = modelsUsed.map(() => ({
      votes: 0,
      valid: 0,
      right: 0,
      abstained: 0,
      failures: {},
      latencies: new NumberList(),
      input: 0,
      output: 0,
    }));
  }

  /** Adds one question; `consensus` is its decision at the configured threshold when known. */
  add(r: QuestionResult, consensus?: Consensus): void {
    const c = consensus ?? decideConsensus(r.votes, r.outcomes, this.confidenceThreshold);
    this.evaluated++;
    const right = isCorrect(c, r.answer);
    const category = this.categories.get(r.category) ?? { questions: 0, determined: 0, right: 0 };
    this.categories.set(r.category, category);
    category.questions++;
    if (c.canDetermine) {
      this.determined++;
      category.determined++;
      if (right) {
        this.correct++;
        category.right++;
      }
      const level =
        c.agreement === 1 ? this.agreement['4/4'] : c.agreement === 0.75 ? this.agreement['3/4'] : null;
      if (level) {
        level.count++;
        if (right) level.right++;
      }
      const cited = r.votes.some(
        (v) => v.error === null && v.outcomeIndex === c.winningOutcomeIndex && v.evidence.length > 0,
      );
      const grounded = this.grounded[cited ? 'with' : 'without'];
      grounded.count++;
      if (right) grounded.right++;
    }
    for (const vote of r.votes) {
      this.searches += vote.searches ?? 0;
      this.toolCalls += vote.evidence.filter((e) => e.kind === 'sibyl').length;
    }
    const reason = abstentionOf(c);
    if (reason) this.reasons[reason]++;
    if (c.status === 'COMPLETED' && c.winningOutcomeIndex !== null) {
      this.calibration.add(c.confidence, c.winningOutcomeIndex === r.answer);
    }
    this.questionLatency.push(Math.max(0, ...r.votes.map((v) => v.latencyMs)));
    this.models.forEach((m, position) => {
      const vote = r.votes[position];
      if (!vote) return;
      m.votes++;
      if (vote.error === null) {
        m.valid++;
        if (vote.outcomeIndex === r.answer) m.right++;
        if (vote.outcomeIndex === null) m.abstained++;
      } else {
        m.failures[vote.error.kind] = (m.failures[vote.error.kind] ?? 0) + 1;
      }
      m.latencies.push(vote.latencyMs);
      m.input += vote.usage?.inputTokens ?? 0;
      m.output += vote.usage?.outputTokens ?? 0;
    });
    THRESHOLDS.forEach((threshold, i) => {
      const at = threshold === this.confidenceThreshold ? c : decideConsensus(r.votes, r.outcomes, threshold);
      const row = this.thresholds[i];
      if (!row || !at.canDetermine) return;
      row.determined++;
      if (isCorrect(at, r.answer)) row.right++;
    });
  }

  /**
   * The evaluation report: every figure is a share 0–1 (null when there is nothing to take it of)
   * computed from the questions added, at the configured threshold, except the threshold table,
   * which decides each question again at each threshold.
   */
  report(run: RunInfo) {
    const byModel: Record<string, ModelFigures> = {};
    this.modelsUsed.forEach((model, position) => {
      const m = this.models[position] as ModelTally;
      byModel[model] = {
        answered: m.valid,
        accuracy: share(m.right, m.valid),
        abstained: m.abstained,
        failed: m.votes - m.valid,
        failures: m.failures,
        latencyMs: { p50: m.latencies.percentile(0.5), p99: m.latencies.percentile(0.99) },
        tokens: { input: m.input, output: m.output },
      };
    });
    const tokens = {
      input: this.models.reduce((n, m) => n + m.input, 0),
      output: this.models.reduce((n, m) => n + m.output, 0),
    };
    const priced = run.prices && run.modelsUsed.every((m) => run.prices?.has(m));
    const costUsd = priced
      ? round6(
          Object.entries(byModel).reduce((usd, [model, m]) => {
            const price = run.prices?.get(model) ?? { input: 0, output: 0 };
            return usd + (m.tokens.input * price.input + m.tokens.output * price.output) / 1e6;
          }, 0),
        )
      : null;
    const level = (c: Count) => ({ count: c.count, accuracy: share(c.right, c.count) });
    const byCategory = Object.fromEntries(
      [...this.categories.keys()].sort().map((name) => {
        const c = this.categories.get(name) ?? { questions: 0, determined: 0, right: 0 };
        return [
          name,
          {
            questions: c.questions,
            determined: c.determined,
            coverage: share(c.determined, c.questions),
            accuracy: share(c.right, c.determined),
          },
        ];
      }),
    );
    const thresholds: ThresholdRow[] = THRESHOLDS.map((threshold, i) => {
      const row = this.thresholds[i] ?? { determined: 0, right: 0 };
      return {
        threshold,
        determined: row.determined,
        coverage: share(row.determined, this.evaluated),
        accuracy: share(row.right, row.determined),
      };
    });
    const reached = thresholds.find((row) => row.accuracy !== null && row.accuracy >= run.target);

    return {
      set: {
        format: run.set.format,
        questions: run.set.questions.length,
        skipped: run.set.skipped,
      },
      mode: run.mode,
      modelsUsed: run.modelsUsed,
      confidenceThreshold: run.confidenceThreshold,
      target: run.target,
      interrupted: run.interrupted,
      evaluated: this.evaluated,
      determined: this.determined,
      correct: this.correct,
      accuracy: share(this.correct, this.determined),
      coverage: share(this.determined, this.evaluated),
      byAgreement: { '4/4': level(this.agreement['4/4']), '3/4': level(this.agreement['3/4']) },
      byModel,
      byCategory,
      ...this.calibration.figures(),
      abstentions: { count: this.evaluated - this.determined, reasons: { ...this.reasons } },
      latencyMs: { p50: this.questionLatency.percentile(0.5), p99: this.questionLatency.percentile(0.99) },
      tokens,
      costUsd,
      thresholds,
      recommendedThreshold: reached ? reached.threshold : null,
      evidence: {
        search: run.search ?? 'on',
        determinedWithEvidence: this.grounded.with.count,
        shareWithEvidence: share(this.grounded.with.count, this.determined),
        accuracyWithEvidence: share(this.grounded.with.right, this.grounded.with.count),
        accuracyWithoutEvidence: share(this.grounded.without.right, this.grounded.without.count),
        searchesPerQuestion: this.evaluated === 0 ? null : round6(this.searches / this.evaluated),
        toolCallsPerQuestion: this.evaluated === 0 ? null : round6(this.toolCalls / this.evaluated),
      },
      startedAt: run.startedAt.toISOString(),
      finishedAt: run.finishedAt.toISOString(),
      answers: { cached: run.cachedAnswers, asked: run.askedAnswers },
    };
  }
}

interface ModelFigures {
  answered: number;
  accuracy: Share;
  abstained: number;
  failed: number;
  failures: Record<string, number>;
  latencyMs: { p50: number | null; p99: number | null };
  tokens: { input: number; output: number };
}

/** The report of some questions held in memory (tests, small sets): a tally of each in turn. */
export function buildReport(results: readonly QuestionResult[], run: RunInfo) {
  const tally = new ReportTally(run.modelsUsed, run.confidenceThreshold);
  for (const r of results) tally.add(r);
  return tally.report(run);
}

export type Report = ReturnType<typeof buildReport>;

/** One question's outcome, a line of the JSON report's `questions` (not part of the published summary). */
export function questionLine(r: QuestionResult, c: Consensus) {
  return {
    id: r.id,
    category: r.category,
    answer: r.answer,
    winningOutcomeIndex: c.winningOutcomeIndex,
    confidence: c.confidence,
    agreement: c.agreement,
    canDetermine: c.canDetermine,
    correct: isCorrect(c, r.answer),
    abstention: abstentionOf(c),
    votes: r.votes.map((v) => ({
      model: v.model,
      outcomeIndex: v.outcomeIndex,
      confidence: v.confidence,
      latencyMs: v.latencyMs,
      error: v.error?.kind ?? null,
    })),
  };
}
