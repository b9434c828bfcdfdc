import { decideConsensus, type Vote } from '../../../src/ai/index.js';
import type { LabelledSet } from '../../../src/evaluation/labelled-set.js';
import {
  type Abstention,
  abstentionOf,
  calibration,
  isCorrect,
  percentile,
  type QuestionResult,
  round6,
  type Share,
  share,
  thresholdTable,
} from '../../../src/evaluation/metrics.js';

/**
 * The report as computed before it was added up one question at a time: from arrays of every
 * question's result. Kept as the oracle that the streamed tally (src/evaluation/report.ts) must
 * equal (test/evaluation/streamed-report.test.ts).
 */

/** USD per million input and output tokens of a model, when the operator gives them. */
export type Prices = ReadonlyMap<string, { input: number; output: number }>;

export interface RunInfo {
  set: LabelledSet;
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
  search?: 'on' | 'off';
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

function byModel(results: readonly QuestionResult[], models: readonly string[]) {
  const out: Record<string, ModelFigures> = {};
  models.forEach((model, position) => {
    const votes = results
      .map((r) => ({ vote: r.votes[position], answer: r.answer }))
      .filter((v): v is { vote: Vote; answer: number | null } => v.vote !== undefined);
    const valid = votes.filter((v) => v.vote.error === null);
    const failures: Record<string, number> = {};
    for (const { vote } of votes)
      if (vote.error) failures[vote.error.kind] = (failures[vote.error.kind] ?? 0) + 1;
    const latencies = votes.map((v) => v.vote.latencyMs);
    out[model] = {
      answered: valid.length,
      accuracy: share(valid.filter((v) => v.vote.outcomeIndex === v.answer).length, valid.length),
      abstained: valid.filter((v) => v.vote.outcomeIndex === null).length,
      failed: votes.length - valid.length,
      failures,
      latencyMs: { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) },
      tokens: {
        input: votes.reduce((n, v) => n + (v.vote.usage?.inputTokens ?? 0), 0),
        output: votes.reduce((n, v) => n + (v.vote.usage?.outputTokens ?? 0), 0),
      },
    };
  });
  return out;
}

/**
 * The evaluation report (docs/ai.md#the-report): every figure is a share 0–1 (null when there is
 * nothing to take it of) computed from the questions answered, at the configured threshold, except
 * the threshold table, which decides each question again at each threshold.
 */
export function buildReport(results: readonly QuestionResult[], run: RunInfo) {
  const decided = results.map((r) => ({
    r,
    c: decideConsensus(r.votes, r.outcomes, run.confidenceThreshold),
  }));
  const determined = decided.filter((d) => d.c.canDetermine);
  const correct = determined.filter((d) => isCorrect(d.c, d.r.answer));

  const agreement = (votes: number) => {
    const at = determined.filter((d) => d.c.agreement === votes / 4);
    return {
      count: at.length,
      accuracy: share(at.filter((d) => isCorrect(d.c, d.r.answer)).length, at.length),
    };
  };

  const categories = [...new Set(results.map((r) => r.category))].sort();
  const byCategory = Object.fromEntries(
    categories.map((category) => {
      const all = decided.filter((d) => d.r.category === category);
      const det = all.filter((d) => d.c.canDetermine);
      return [
        category,
        {
          questions: all.length,
          determined: det.length,
          coverage: share(det.length, all.length),
          accuracy: share(det.filter((d) => isCorrect(d.c, d.r.answer)).length, det.length),
        },
      ];
    }),
  );

  const reasons: Record<Abstention, number> = { failed: 0, no_outcome: 0, split: 0, low_confidence: 0 };
  for (const d of decided) {
    const reason = abstentionOf(d.c);
    if (reason) reasons[reason]++;
  }

  const calibrated = calibration(
    decided
      .filter((d) => d.c.status === 'COMPLETED' && d.c.winningOutcomeIndex !== null)
      .map((d) => ({ confidence: d.c.confidence, right: d.c.winningOutcomeIndex === d.r.answer })),
  );

  const questionLatency = results.map((r) => Math.max(0, ...r.votes.map((v) => v.latencyMs)));
  const models = byModel(results, run.modelsUsed);
  const tokens = {
    input: Object.values(models).reduce((n, m) => n + m.tokens.input, 0),
    output: Object.values(models).reduce((n, m) => n + m.tokens.output, 0),
  };
  const priced = run.prices && run.modelsUsed.every((m) => run.prices?.has(m));
  const costUsd = priced
    ? round6(
        Object.entries(models).reduce((usd, [model, m]) => {
          const price = run.prices?.get(model) ?? { input: 0, output: 0 };
          return usd + (m.tokens.input * price.input + m.tokens.output * price.output) / 1e6;
        }, 0),
      )
    : null;

  // Evidence: a determined answer is grounded when a valid vote for its winner cites anything.
  const grounded = determined.filter((d) =>
    d.r.votes.some(
      (v) => v.error === null && v.outcomeIndex === d.c.winningOutcomeIndex && v.evidence.length > 0,
    ),
  );
  const ungrounded = determined.filter((d) => !grounded.includes(d));
  const allVotes = results.flatMap((r) => r.votes);
  const perQuestion = (n: number) => (results.length === 0 ? null : round6(n / results.length));

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
    evaluated: results.length,
    determined: determined.length,
    correct: correct.length,
    accuracy: share(correct.length, determined.length),
    coverage: share(determined.length, results.length),
    byAgreement: { '4/4': agreement(4), '3/4': agreement(3) },
    byModel: models,
    byCategory,
    ...calibrated,
    abstentions: { count: results.length - determined.length, reasons },
    latencyMs: { p50: percentile(questionLatency, 0.5), p99: percentile(questionLatency, 0.99) },
    tokens,
    costUsd,
    ...thresholdTable(results, run.target),
    evidence: {
      search: run.search ?? 'on',
      determinedWithEvidence: grounded.length,
      shareWithEvidence: share(grounded.length, determined.length),
      accuracyWithEvidence: share(grounded.filter((d) => isCorrect(d.c, d.r.answer)).length, grounded.length),
      accuracyWithoutEvidence: share(
        ungrounded.filter((d) => isCorrect(d.c, d.r.answer)).length,
        ungrounded.length,
      ),
      searchesPerQuestion: perQuestion(allVotes.reduce((n, v) => n + (v.searches ?? 0), 0)),
      toolCallsPerQuestion: perQuestion(
        allVotes.reduce((n, v) => n + v.evidence.filter((e) => e.kind === 'sibyl').length, 0),
      ),
    },
    startedAt: run.startedAt.toISOString(),
    finishedAt: run.finishedAt.toISOString(),
    answers: { cached: run.cachedAnswers, asked: run.askedAnswers },
  };
}

export type Report = ReturnType<typeof buildReport>;

/** Each question's outcome, for the JSON report's `questions` (not part of the published summary). */
export function questionLines(results: readonly QuestionResult[], threshold: number) {
  return results.map((r) => {
    const c = decideConsensus(r.votes, r.outcomes, threshold);
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
  });
}
