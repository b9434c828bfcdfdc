import { ABSTAIN_REASONS, type AbstainReason } from './evidence.js';
import { REASONING_MAX_CHARS } from './prompt.js';
import { ModelError } from './types.js';

/** A schema-valid answer: a vote for an outcome, or null for "cannot determine". */
export interface Answer {
  outcomeIndex: number | null;
  confidence: number;
  reasoning: string;
  /** Null on a vote for an outcome; on "cannot determine", the model's reason (docs/ai.md#abstentions). */
  abstainReason: AbstainReason | null;
}

const FIELDS = ['outcomeIndex', 'confidence', 'reasoning', 'abstainReason'];

function invalid(message: string): ModelError {
  return new ModelError('invalid_answer', message);
}

/**
 * Checks a model's answer against the schema, deterministically, in code: whatever a model wrote
 * (prose, a string index, an index out of range, extra fields) is that model failing, never a vote.
 * `abstainReason` may be absent (an answer cached before it existed).
 */
export function checkAnswer(value: unknown, outcomeCount: number): Answer {
  if (typeof value === 'string') throw new ModelError('bad_response', 'answer is text, not a JSON object');
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid('answer is not a JSON object');
  }
  const record = value as Record<string, unknown>;
  const extra = Object.keys(record).filter((key) => !FIELDS.includes(key));
  if (extra.length > 0) throw invalid(`answer has unknown fields: ${extra.slice(0, 3).join(', ')}`);
  const { outcomeIndex, confidence, reasoning } = record;
  if (outcomeIndex === undefined) throw invalid('outcomeIndex is missing');
  if (outcomeIndex !== null) {
    if (typeof outcomeIndex !== 'number' || !Number.isInteger(outcomeIndex)) {
      throw invalid('outcomeIndex is not an integer or null');
    }
    if (outcomeIndex < 0 || outcomeIndex >= outcomeCount) {
      throw invalid(`outcomeIndex ${outcomeIndex} is outside 0..${outcomeCount - 1}`);
    }
  }
  if (typeof confidence !== 'number' || !Number.isFinite(confidence) || confidence < 0 || confidence > 1) {
    throw invalid('confidence is not a number from 0 to 1');
  }
  if (typeof reasoning !== 'string') throw invalid('reasoning is not a string');
  if ([...reasoning].length > REASONING_MAX_CHARS) {
    throw invalid(`reasoning is longer than ${REASONING_MAX_CHARS} characters`);
  }
  const { abstainReason } = record;
  if (
    abstainReason !== undefined &&
    abstainReason !== null &&
    !ABSTAIN_REASONS.includes(abstainReason as AbstainReason)
  ) {
    throw invalid(`abstainReason is not one of ${ABSTAIN_REASONS.join(', ')} or null`);
  }
  // A reason beside an outcome says nothing: the vote stands, without it. "Cannot determine" with
  // no reason given is the general one.
  const reason =
    outcomeIndex !== null
      ? null
      : ((abstainReason as AbstainReason | null | undefined) ?? 'insufficient_evidence');
  return { outcomeIndex, confidence, reasoning, abstainReason: reason };
}
