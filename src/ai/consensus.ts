import { isValidAnswer, MODEL_COUNT, type Vote } from './types.js';

/** At least this many of the four models must give a valid answer, else the resolution FAILED. */
export const MIN_VALID_ANSWERS = 3;
/** And at least this many must vote for the winner for it to be determined. */
export const MIN_AGREEING_VOTES = 3;
export const DEFAULT_CONFIDENCE_THRESHOLD = 0.75;

export interface Consensus {
  /** FAILED when fewer than MIN_VALID_ANSWERS models gave a valid answer. */
  status: 'COMPLETED' | 'FAILED';
  validAnswers: number;
  winningOutcomeIndex: number | null;
  winningOutcomeLabel: string | null;
  /** Mean confidence of the winner's voters; 0 when nobody voted for an outcome. */
  confidence: number;
  /** Votes for the winner ÷ 4. */
  agreement: number;
  reasoning: string;
  canDetermine: boolean;
  /** Every model asked, `<provider>/<model>`, in slot order. */
  modelsUsed: string[];
}

// Confidences are averaged in floating point: (0.9 + 0.9 + 0.9) / 3 is 0.9000000000000001. Nine
// decimals remove that noise without merging any confidences a model would report.
function round9(x: number): number {
  return Math.round(x * 1e9) / 1e9;
}

interface Tally {
  index: number;
  votes: Vote[];
  confidenceSum: number;
}

/**
 * The consensus rule of docs/ai.md#consensus over the votes of the four models asked: the winner is
 * the outcome with the most votes, ties broken by the higher summed confidence, then the lower
 * index; it is determined when at least 3 of the 4 voted for it and their mean confidence reaches
 * the threshold. When nobody voted for an outcome, the winner is null.
 */
export function decideConsensus(
  votes: readonly Vote[],
  outcomes: readonly string[],
  confidenceThreshold: number,
): Consensus {
  const valid = votes.filter(isValidAnswer);
  const tallies = new Map<number, Tally>();
  for (const vote of valid) {
    if (vote.outcomeIndex === null) continue;
    const tally = tallies.get(vote.outcomeIndex) ?? { index: vote.outcomeIndex, votes: [], confidenceSum: 0 };
    tally.votes.push(vote);
    tally.confidenceSum += vote.confidence ?? 0;
    tallies.set(vote.outcomeIndex, tally);
  }
  const ranked = [...tallies.values()].sort(
    (a, b) => b.votes.length - a.votes.length || b.confidenceSum - a.confidenceSum || a.index - b.index,
  );
  const winner = ranked[0];
  const modelsUsed = [...votes].sort((a, b) => a.position - b.position).map((v) => v.model);
  const status = valid.length >= MIN_VALID_ANSWERS ? 'COMPLETED' : 'FAILED';
  if (!winner) {
    return {
      status,
      validAnswers: valid.length,
      winningOutcomeIndex: null,
      winningOutcomeLabel: null,
      confidence: 0,
      agreement: 0,
      reasoning: combineReasoning(valid),
      canDetermine: false,
      modelsUsed,
    };
  }
  const confidence = round9(winner.confidenceSum / winner.votes.length);
  return {
    status,
    validAnswers: valid.length,
    winningOutcomeIndex: winner.index,
    winningOutcomeLabel: outcomes[winner.index] ?? null,
    confidence,
    agreement: winner.votes.length / MODEL_COUNT,
    reasoning: combineReasoning(winner.votes),
    canDetermine:
      status === 'COMPLETED' &&
      winner.votes.length >= MIN_AGREEING_VOTES &&
      confidence >= confidenceThreshold,
    modelsUsed,
  };
}

/** One line per model, in slot order: `<provider>/<model>: <its reasoning>`. */
function combineReasoning(votes: readonly Vote[]): string {
  return [...votes]
    .sort((a, b) => a.position - b.position)
    .filter((v) => v.reasoning)
    .map((v) => `${v.model}: ${v.reasoning}`)
    .join('\n');
}
