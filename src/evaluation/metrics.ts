import { type Consensus, decideConsensus, type Vote } from '../ai/index.js';

/** One question as evaluated: its known answer and the four models' votes (asked or cached). */
export interface QuestionResult {
  id: string;
  category: string;
  outcomes: readonly string[];
  /** The right outcome; null: the right answer is to abstain. */
  answer: number | null;
  /** In slot order. */
  votes: Vote[];
}

/** A share 0–1, or null when there is nothing to take a share of. */
export type Share = number | null;

/** The thresholds of the table: 0.50 to 0.95 by 0.05. */
export const THRESHOLDS = Array.from({ length: 10 }, (_, i) => Math.round((0.5 + i * 0.05) * 100) / 100);

/** Bins of the reliability diagram and of the expected calibration error: ten of 0.1 each. */
export const CALIBRATION_BINS = 10;

/** Six decimals: enough for any share of a set of a million questions, short enough to read. */
export function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

export function share(part: number, whole: number): Share {
  return whole === 0 ? null : round6(part / whole);
}

/** The nearest-rank percentile (`q` 0–1) of some numbers; null for none. */
export function percentile(values: readonly number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] as number;
}

/** Why a consensus was not determined (docs/ai.md#consensus). */
export type Abstention = 'failed' | 'no_outcome' | 'split' | 'low_confidence';

export function abstentionOf(consensus: Consensus): Abstention | null {
  if (consensus.canDetermine) return null;
  if (consensus.status === 'FAILED') return 'failed';
  if (consensus.winningOutcomeIndex === null) return 'no_outcome';
  if (consensus.agreement < 0.75) return 'split';
  return 'low_confidence';
}

/** A determined consensus that picked the known answer (a question to abstain on has none). */
export function isCorrect(consensus: Consensus, answer: number | null): boolean {
  return consensus.canDetermine && answer !== null && consensus.winningOutcomeIndex === answer;
}

export interface ThresholdRow {
  threshold: number;
  determined: number;
  coverage: Share;
  accuracy: Share;
}

/** Coverage and accuracy of the determined answers when `canDetermine` uses `threshold`. */
export function atThreshold(results: readonly QuestionResult[], threshold: number): ThresholdRow {
  let determined = 0;
  let correct = 0;
  for (const r of results) {
    const c = decideConsensus(r.votes, r.outcomes, threshold);
    if (!c.canDetermine) continue;
    determined++;
    if (isCorrect(c, r.answer)) correct++;
  }
  return {
    threshold,
    determined,
    coverage: share(determined, results.length),
    accuracy: share(correct, determined),
  };
}

/** The threshold table and the lowest threshold whose accuracy reaches `target`. */
export function thresholdTable(results: readonly QuestionResult[], target: number) {
  const rows = THRESHOLDS.map((t) => atThreshold(results, t));
  const reached = rows.find((row) => row.accuracy !== null && row.accuracy >= target);
  return { thresholds: rows, recommendedThreshold: reached ? reached.threshold : null };
}

export interface ReliabilityBin {
  /** The bin's lower and upper confidence bounds. */
  from: number;
  to: number;
  count: number;
  /** Mean consensus confidence in the bin; null when empty. */
  confidence: Share;
  /** Share of its winners that were right; null when empty. */
  accuracy: Share;
}

/**
 * Calibration of the consensus confidence, over every completed resolution that named a winner
 * (determined or not): the confidence is read as the chance that the winner is the right answer.
 * Brier score: mean of (confidence − right)²; expected calibration error: over ten equal bins, the
 * count-weighted mean of |accuracy − mean confidence|. Added up one pair at a time.
 */
export class CalibrationTally {
  private readonly bins = Array.from({ length: CALIBRATION_BINS }, () => ({ n: 0, confidence: 0, right: 0 }));
  private brier = 0;
  private count = 0;

  add(confidence: number, right: boolean): void {
    this.count++;
    this.brier += (confidence - (right ? 1 : 0)) ** 2;
    const bin = this.bins[Math.min(CALIBRATION_BINS - 1, Math.floor(confidence * CALIBRATION_BINS + 1e-9))];
    if (!bin) return;
    bin.n++;
    bin.confidence += confidence;
    bin.right += right ? 1 : 0;
  }

  figures() {
    let ece = 0;
    for (const bin of this.bins) {
      if (bin.n > 0) ece += (bin.n / this.count) * Math.abs(bin.right / bin.n - bin.confidence / bin.n);
    }
    const reliability: ReliabilityBin[] = this.bins.map((bin, i) => ({
      from: i / CALIBRATION_BINS,
      to: (i + 1) / CALIBRATION_BINS,
      count: bin.n,
      confidence: share(bin.confidence, bin.n),
      accuracy: share(bin.right, bin.n),
    }));
    return {
      calibrated: this.count,
      brier: this.count ? round6(this.brier / this.count) : null,
      ece: this.count ? round6(ece) : null,
      reliability,
    };
  }
}

export function calibration(pairs: readonly { confidence: number; right: boolean }[]) {
  const tally = new CalibrationTally();
  for (const { confidence, right } of pairs) tally.add(confidence, right);
  return tally.figures();
}
