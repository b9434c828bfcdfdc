import type { AbstainReason } from './evidence.js';
import { isValidAnswer, MODEL_COUNT, type Vote } from './types.js';

/** At least this many of the four models must give a valid answer, else the resolution FAILED. */
export const MIN_VALID_ANSWERS = 3;
/** And at least this many must vote for the winner for it to be determined. */
export const MIN_AGREEING_VOTES = 3;
/** The threshold of `canDetermine` when the caller gives none (docs/ai.md); the one place it is set. */
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
  /** Votes for the winner (what an attestation states: docs/attestations.md#the-message). */
  agreeing: number;
  reasoning: string;
  canDetermine: boolean;
  /** Not determined, and at least MIN_AGREEING_VOTES models abstained for the same reason: that reason. */
  abstainReason: AbstainReason | null;
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
      agreeing: 0,
      reasoning: combineReasoning(valid),
      canDetermine: false,
      abstainReason: sharedAbstainReason(valid),
      modelsUsed,
    };
  }
  const confidence = round9(winner.confidenceSum / winner.votes.length);
  const canDetermine =
    status === 'COMPLETED' && winner.votes.length >= MIN_AGREEING_VOTES && confidence >= confidenceThreshold;
  return {
    status,
    validAnswers: valid.length,
    winningOutcomeIndex: winner.index,
    winningOutcomeLabel: outcomes[winner.index] ?? null,
    confidence,
    agreement: winner.votes.length / MODEL_COUNT,
    agreeing: winner.votes.length,
    reasoning: combineReasoning(winner.votes),
    canDetermine,
    abstainReason: canDetermine ? null : sharedAbstainReason(valid),
    modelsUsed,
  };
}

/** The reason at least MIN_AGREEING_VOTES of the valid answers gave for "cannot determine", if any. */
function sharedAbstainReason(valid: readonly Vote[]): AbstainReason | null {
  const counts = new Map<AbstainReason, number>();
  for (const vote of valid) {
    if (vote.outcomeIndex !== null || vote.abstainReason === null) continue;
    const count = (counts.get(vote.abstainReason) ?? 0) + 1;
    if (count >= MIN_AGREEING_VOTES) return vote.abstainReason;
    counts.set(vote.abstainReason, count);
  }
  return null;
}

/**
 * Whatever ends or visually reorders a line: line and paragraph separators (LF, CR, VT, FF, NEL,
 * U+2028, U+2029), every other control character, and the bidirectional embeddings, overrides and
 * isolates that can make a later line appear to start earlier.
 */
const LINE_BREAKERS = /\s*(?:[\p{Cc}\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]\s*)+/gu;

/**
 * A model's reasoning as one line: a model's text may contain newlines, and a line of its own
 * starting `prov4/m4: I agree` would read as another model's vote. Each run of line breakers
 * (with the spaces around it) becomes one space, so every line of the combined text starts with the model that wrote it.
 */
export function oneLine(text: string): string {
  return text.replace(LINE_BREAKERS, ' ').trim();
}

/**
 * One line per model, in slot order: `<provider>/<model>: <its reasoning>`, the reasoning made one
 * line (oneLine) so that no model can write a line in another's name. Each model's own text, as
 * sent, stays on its vote.
 */
function combineReasoning(votes: readonly Vote[]): string {
  return [...votes]
    .sort((a, b) => a.position - b.position)
    .map((v) => ({ model: v.model, reasoning: oneLine(v.reasoning ?? '') }))
    .filter((v) => v.reasoning)
    .map((v) => `${v.model}: ${v.reasoning}`)
    .join('\n');
}

/**
 * The result fields of a COMPLETED resolution, in the order of the `AiResult` schema: what
 * `GET /ai/request/:id`, the AI callback and a scheduled AI job's result all start with.
 */
export function consensusResult(requestId: string, question: string, consensus: Consensus) {
  return {
    requestId,
    question,
    winningOutcomeIndex: consensus.winningOutcomeIndex,
    winningOutcomeLabel: consensus.winningOutcomeLabel,
    confidence: consensus.confidence,
    agreement: consensus.agreement,
    reasoning: consensus.reasoning,
    modelsUsed: consensus.modelsUsed,
    canDetermine: consensus.canDetermine,
    abstainReason: consensus.abstainReason,
  };
}
