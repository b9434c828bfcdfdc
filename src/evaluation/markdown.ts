import type { Report } from './report.js';

const pct = (v: number | null) => (v === null ? '—' : `${(v * 100).toFixed(1)}%`);
const num = (v: number | null) => (v === null ? '—' : String(v));
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The report as a Markdown page, the reliability diagram beside it as an image (`svgName`). */
export function reportMarkdown(report: Report, svgName: string): string {
  const lines: string[] = [];
  const add = (...l: string[]) => lines.push(...l);
  add(
    '# AI resolution scorecard',
    '',
    `${report.evaluated} of ${report.set.questions} questions (${report.set.format} set) evaluated on the ${report.mode} models ` +
      `${report.modelsUsed.map((m) => `\`${m}\``).join(', ')}, confidence threshold ${report.confidenceThreshold}.` +
      (report.interrupted ? ' **Interrupted: the figures cover the questions answered before Ctrl-C.**' : ''),
    '',
  );
  const skipped = Object.entries(report.set.skipped);
  if (skipped.length) add(`Skipped from the set: ${skipped.map(([r, n]) => `${n} ${r}`).join(', ')}.`, '');
  add(
    '| Figure | Value |',
    '|---|---|',
    `| Accuracy of determined answers | ${pct(report.accuracy)} (${report.correct} of ${report.determined}) |`,
    `| Coverage (share determined) | ${pct(report.coverage)} (${report.determined} of ${report.evaluated}) |`,
    `| Accuracy at 4/4 agreement | ${pct(report.byAgreement['4/4'].accuracy)} (${report.byAgreement['4/4'].count}) |`,
    `| Accuracy at 3/4 agreement | ${pct(report.byAgreement['3/4'].accuracy)} (${report.byAgreement['3/4'].count}) |`,
    `| Brier score of the consensus confidence | ${num(report.brier)} (${report.calibrated} answers) |`,
    `| Expected calibration error | ${num(report.ece)} |`,
    `| Latency p50 / p99 | ${num(report.latencyMs.p50)} ms / ${num(report.latencyMs.p99)} ms |`,
    `| Tokens in / out | ${report.tokens.input} / ${report.tokens.output} |`,
    `| Cost | ${report.costUsd === null ? '— (no prices given)' : `${report.costUsd} USD`} |`,
    `| Determined answers citing evidence | ${pct(report.evidence.shareWithEvidence)} (${report.evidence.determinedWithEvidence} of ${report.determined}) |`,
    `| Accuracy with / without evidence | ${pct(report.evidence.accuracyWithEvidence)} / ${pct(report.evidence.accuracyWithoutEvidence)} |`,
    `| Web searches / Sibyl tool calls per question | ${num(report.evidence.searchesPerQuestion)} / ${num(report.evidence.toolCallsPerQuestion)} (web search ${report.evidence.search}) |`,
    '',
    '## Abstentions',
    '',
    `${report.abstentions.count} not determined: ${report.abstentions.reasons.split} split (fewer than 3 of 4 agree), ` +
      `${report.abstentions.reasons.low_confidence} below the confidence threshold, ${report.abstentions.reasons.no_outcome} with no outcome voted, ` +
      `${report.abstentions.reasons.failed} failed (fewer than 3 valid answers).`,
    '',
    '## Threshold table',
    '',
    '| Threshold | Determined | Coverage | Accuracy |',
    '|---|---|---|---|',
    ...report.thresholds.map(
      (t) =>
        `| ${t.threshold.toFixed(2)}${t.threshold === report.recommendedThreshold ? ' ◀' : ''} | ${t.determined} | ${pct(t.coverage)} | ${pct(t.accuracy)} |`,
    ),
    '',
    report.recommendedThreshold === null
      ? `No threshold from 0.50 to 0.95 reaches the target accuracy of ${pct(report.target)}.`
      : `The lowest threshold reaching the target accuracy of ${pct(report.target)} is **${report.recommendedThreshold.toFixed(2)}**.`,
    '',
    '## Each model',
    '',
    '| Model | Answered | Accuracy | Abstained | Failed | Latency p50 / p99 | Tokens in / out |',
    '|---|---|---|---|---|---|---|',
    ...Object.entries(report.byModel).map(
      ([model, m]) =>
        `| \`${cell(model)}\` | ${m.answered} | ${pct(m.accuracy)} | ${m.abstained} | ${m.failed}${
          Object.keys(m.failures).length
            ? ` (${Object.entries(m.failures)
                .map(([k, n]) => `${n} ${k}`)
                .join(', ')})`
            : ''
        } | ${num(m.latencyMs.p50)} / ${num(m.latencyMs.p99)} ms | ${m.tokens.input} / ${m.tokens.output} |`,
    ),
    '',
    '## By category',
    '',
    '| Category | Questions | Determined | Coverage | Accuracy |',
    '|---|---|---|---|---|',
    ...Object.entries(report.byCategory).map(
      ([category, c]) =>
        `| ${cell(category)} | ${c.questions} | ${c.determined} | ${pct(c.coverage)} | ${pct(c.accuracy)} |`,
    ),
    '',
    '## Calibration',
    '',
    `![Reliability diagram](${svgName})`,
    '',
    '| Confidence | Answers | Mean confidence | Share right |',
    '|---|---|---|---|',
    ...report.reliability
      .filter((b) => b.count > 0)
      .map(
        (b) =>
          `| ${b.from.toFixed(1)}–${b.to.toFixed(1)} | ${b.count} | ${num(b.confidence)} | ${pct(b.accuracy)} |`,
      ),
    '',
    `Evaluated ${report.startedAt} to ${report.finishedAt}; ${report.answers.cached} answers from the cache, ${report.answers.asked} asked.`,
    '',
  );
  return lines.join('\n');
}
