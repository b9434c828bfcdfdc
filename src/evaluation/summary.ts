import type { Report } from './report.js';

/**
 * What `--publish` stores and `GET /ai/scorecard` answers: the report's figures, without what only
 * the operator needs (token counts and their cost, the cache's counts). The route is free, so the
 * answer carries no `costUsd` (docs/ai.md#the-published-scorecard).
 */
export function scorecardSummary(report: Report) {
  return {
    set: report.set,
    mode: report.mode,
    modelsUsed: report.modelsUsed,
    confidenceThreshold: report.confidenceThreshold,
    target: report.target,
    evaluated: report.evaluated,
    determined: report.determined,
    accuracy: report.accuracy,
    coverage: report.coverage,
    byAgreement: report.byAgreement,
    byModel: Object.fromEntries(
      Object.entries(report.byModel).map(([model, m]) => [
        model,
        { answered: m.answered, accuracy: m.accuracy, abstained: m.abstained, failed: m.failed },
      ]),
    ),
    byCategory: report.byCategory,
    brier: report.brier,
    ece: report.ece,
    calibrated: report.calibrated,
    reliability: report.reliability,
    abstentions: report.abstentions,
    latencyMs: report.latencyMs,
    thresholds: report.thresholds,
    recommendedThreshold: report.recommendedThreshold,
    evaluatedAt: report.finishedAt,
  };
}

export type ScorecardSummary = ReturnType<typeof scorecardSummary>;
