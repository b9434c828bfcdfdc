import { describe, expect, it } from 'vitest';
import { decideConsensus } from '../../src/ai/consensus.js';
import type { Vote } from '../../src/ai/types.js';

/**
 * The consensus rule (docs/ai.md#consensus), as a table: each row gives the four models' answers —
 * an outcome index with its confidence, `?` for "cannot determine", `x` for a failure — and the
 * threshold, and expects the whole outcome.
 */

const OUTCOMES = ['Yes', 'No', 'Maybe'];
const MODELS = ['openai/a', 'anthropic/b', 'google/c', 'xai/d'];

type Answer = [number, number] | '?' | 'x';

function votes(answers: Answer[]): Vote[] {
  return answers.map((answer, position) => {
    const base = {
      position,
      model: MODELS[position] as string,
      latencyMs: 10,
      usage: null,
      evidence: [],
      searches: null,
      search: null,
      abstainReason: null,
    };
    if (answer === 'x') {
      return {
        ...base,
        outcomeIndex: null,
        confidence: null,
        reasoning: null,
        error: { kind: 'timeout', message: 'no answer' },
      };
    }
    if (answer === '?') {
      return { ...base, outcomeIndex: null, confidence: 0.4, reasoning: `r${position}`, error: null };
    }
    return {
      ...base,
      outcomeIndex: answer[0],
      confidence: answer[1],
      reasoning: `r${position}`,
      error: null,
    };
  });
}

interface Row {
  name: string;
  answers: Answer[];
  threshold?: number;
  expected: {
    status: 'COMPLETED' | 'FAILED';
    winner: number | null;
    agreement: number;
    confidence: number;
    canDetermine: boolean;
    reasoning?: string;
  };
}

const TABLE: Row[] = [
  {
    name: '4/4 agree',
    answers: [
      [0, 0.9],
      [0, 0.8],
      [0, 0.7],
      [0, 1],
    ],
    expected: { status: 'COMPLETED', winner: 0, agreement: 1, confidence: 0.85, canDetermine: true },
  },
  {
    name: '3/1',
    answers: [
      [1, 0.9],
      [1, 0.9],
      [0, 0.99],
      [1, 0.9],
    ],
    expected: {
      status: 'COMPLETED',
      winner: 1,
      agreement: 0.75,
      confidence: 0.9,
      canDetermine: true,
      reasoning: 'openai/a: r0\nanthropic/b: r1\nxai/d: r3',
    },
  },
  {
    name: '3 answered the same + 1 failed',
    answers: [[2, 0.8], 'x', [2, 0.8], [2, 0.8]],
    expected: { status: 'COMPLETED', winner: 2, agreement: 0.75, confidence: 0.8, canDetermine: true },
  },
  {
    name: '2/2 tie: the higher summed confidence wins, not determinable',
    answers: [
      [0, 0.6],
      [1, 0.9],
      [0, 0.6],
      [1, 0.8],
    ],
    expected: { status: 'COMPLETED', winner: 1, agreement: 0.5, confidence: 0.85, canDetermine: false },
  },
  {
    name: '2/2 tie with equal summed confidence: the lower index wins',
    answers: [
      [1, 0.7],
      [0, 0.8],
      [1, 0.9],
      [0, 0.8],
    ],
    expected: { status: 'COMPLETED', winner: 0, agreement: 0.5, confidence: 0.8, canDetermine: false },
  },
  {
    name: '2/1/1: plurality reported, not determinable',
    answers: [
      [2, 0.9],
      [0, 0.95],
      [2, 0.9],
      [1, 0.99],
    ],
    expected: { status: 'COMPLETED', winner: 2, agreement: 0.5, confidence: 0.9, canDetermine: false },
  },
  {
    name: '1/1/1 + cannot-determine: tie on count, highest confidence wins',
    answers: [[0, 0.5], [1, 0.7], [2, 0.6], '?'],
    expected: { status: 'COMPLETED', winner: 1, agreement: 0.25, confidence: 0.7, canDetermine: false },
  },
  {
    name: 'all cannot-determine: null winner, completed',
    answers: ['?', '?', '?', '?'],
    expected: {
      status: 'COMPLETED',
      winner: null,
      agreement: 0,
      confidence: 0,
      canDetermine: false,
      reasoning: 'openai/a: r0\nanthropic/b: r1\ngoogle/c: r2\nxai/d: r3',
    },
  },
  {
    name: '3 cannot-determine + 1 failure: still completed, null winner',
    answers: ['?', 'x', '?', '?'],
    expected: { status: 'COMPLETED', winner: null, agreement: 0, confidence: 0, canDetermine: false },
  },
  {
    name: '2 votes, 1 cannot-determine, 1 other vote: 2 votes are not enough',
    answers: [[0, 0.9], [0, 0.9], '?', [1, 0.9]],
    expected: { status: 'COMPLETED', winner: 0, agreement: 0.5, confidence: 0.9, canDetermine: false },
  },
  {
    name: '2 failures → FAILED (even if the other two agree)',
    answers: [[0, 0.9], 'x', [0, 0.9], 'x'],
    expected: { status: 'FAILED', winner: 0, agreement: 0.5, confidence: 0.9, canDetermine: false },
  },
  {
    name: '4 failures → FAILED',
    answers: ['x', 'x', 'x', 'x'],
    expected: { status: 'FAILED', winner: null, agreement: 0, confidence: 0, canDetermine: false },
  },
  {
    name: 'threshold just above the confidence: not determinable',
    threshold: 0.8000001,
    answers: [
      [0, 0.8],
      [0, 0.8],
      [0, 0.8],
      [1, 0.8],
    ],
    expected: { status: 'COMPLETED', winner: 0, agreement: 0.75, confidence: 0.8, canDetermine: false },
  },
  {
    name: 'threshold exactly the confidence (0.9 × 3, no floating-point noise): determinable',
    threshold: 0.9,
    answers: [[0, 0.9], [0, 0.9], [0, 0.9], 'x'],
    expected: { status: 'COMPLETED', winner: 0, agreement: 0.75, confidence: 0.9, canDetermine: true },
  },
  {
    name: 'threshold just below the confidence: determinable',
    threshold: 0.7499999,
    answers: [
      [1, 0.7],
      [1, 0.8],
      [1, 0.75],
      [1, 0.75],
    ],
    expected: { status: 'COMPLETED', winner: 1, agreement: 1, confidence: 0.75, canDetermine: true },
  },
  {
    name: 'default-like threshold 0.75 with mean 0.7499999…: not determinable',
    threshold: 0.75,
    answers: [
      [1, 0.75],
      [1, 0.75],
      [1, 0.7499997],
      [0, 1],
    ],
    expected: { status: 'COMPLETED', winner: 1, agreement: 0.75, confidence: 0.7499999, canDetermine: false },
  },
  {
    name: 'threshold 0: any 3-of-4 winner is determinable',
    threshold: 0,
    answers: [[2, 0], [2, 0], [2, 0], '?'],
    expected: { status: 'COMPLETED', winner: 2, agreement: 0.75, confidence: 0, canDetermine: true },
  },
];

describe('consensus', () => {
  it.each(TABLE)('$name', ({ answers, threshold = 0.75, expected }) => {
    const consensus = decideConsensus(votes(answers), OUTCOMES, threshold);
    expect({
      status: consensus.status,
      winner: consensus.winningOutcomeIndex,
      agreement: consensus.agreement,
      confidence: consensus.confidence,
      canDetermine: consensus.canDetermine,
      ...(expected.reasoning !== undefined ? { reasoning: consensus.reasoning } : {}),
    }).toEqual(expected);
    expect(consensus.winningOutcomeLabel).toBe(expected.winner === null ? null : OUTCOMES[expected.winner]);
    expect(consensus.modelsUsed).toEqual(MODELS);
  });

  it('votes given out of slot order give the same consensus', () => {
    const ordered = votes([[0, 0.9], [1, 0.6], [0, 0.7], 'x']);
    const shuffled = [ordered[3], ordered[1], ordered[0], ordered[2]] as Vote[];
    expect(decideConsensus(shuffled, OUTCOMES, 0.75)).toEqual(decideConsensus(ordered, OUTCOMES, 0.75));
  });
});
