import { describe, expect, it } from 'vitest';
import { resolveWithModels } from '../../src/ai/resolver.js';
import { createSandboxModels, parseSandboxDirectives, sandboxOutcome } from '../../src/ai/sandbox.js';
import { ManualClock } from '../../src/lib/clock.js';

/** The sandbox models are deterministic, and the `[sandbox:…]` directives steer them (docs/ai.md#sandbox). */

const question = (context: string) => ({
  question: 'Will SOL close above 300 USD on 2026-12-31?',
  outcomes: ['Yes', 'No', 'Unclear'],
  context,
});

async function resolve(context: string, threshold = 0.75) {
  return resolveWithModels(createSandboxModels(5000), question(context), {
    confidenceThreshold: threshold,
    deadlineMs: 5000,
    retries: 0,
    clock: new ManualClock('2026-12-07T12:00:00Z'),
  });
}

describe('sandbox directives', () => {
  it.each([
    ['', {}],
    ['Some context without directives.', {}],
    ['[sandbox:votes=1,1,1,0]', { votes: [1, 1, 1, 0] }],
    [
      '[sandbox:votes=0,?,x,2] [sandbox:confidence=0.6]',
      { votes: [0, 'unknown', 'fail', 2], confidence: 0.6 },
    ],
    ['before [sandbox:delay=250] after', { delayMs: 250 }],
    ['[sandbox:confidence=1]', { confidence: 1 }],
    ['[sandbox:delay=30000]', { delayMs: 30000 }],
    ['[sandbox:evidence=none]', { evidence: 'none' }],
    ['[sandbox:abstain=too_early]', { abstain: 'too_early' }],
  ])('%j', (context, directives) => {
    expect(parseSandboxDirectives(context)).toEqual({ directives, problems: [] });
  });

  it.each([
    ['[sandbox:votes=1,1,1]', 'votes takes exactly 4 entries, e.g. 1,1,1,0'],
    ['[sandbox:votes=1,1,1,yes]', 'votes entry "yes" is not an outcome index, ? or x'],
    ['[sandbox:confidence=1.5]', 'confidence takes a number from 0 to 1, e.g. 0.6'],
    ['[sandbox:delay=30001]', 'delay takes whole milliseconds from 0 to 30000'],
    ['[sandbox:delay=-1]', 'delay takes whole milliseconds from 0 to 30000'],
    [
      '[sandbox:seed=4]',
      'unknown directive [sandbox:seed=…]; known: votes, confidence, delay, evidence, abstain, price',
    ],
    ['[sandbox:votes 1,1,1,1]', 'a [sandbox:…] directive is malformed; write [sandbox:name=value]'],
    ['[sandbox:delay=1][sandbox:delay=2]', '[sandbox:delay=…] is given twice'],
    ['[sandbox:evidence=all]', 'evidence takes none'],
    ['[sandbox:abstain=later]', 'abstain takes one of too_early, insufficient_evidence, ambiguous'],
    ['[sandbox:abstain=too_early][sandbox:abstain=ambiguous]', '[sandbox:abstain=…] is given twice'],
  ])('%j is refused: %s', (context, problem) => {
    expect(parseSandboxDirectives(context).problems).toEqual([problem]);
  });
});

describe('sandbox models', () => {
  it('cite one deterministic https://example.com source quoting the question, one search each', async () => {
    const { votes } = await resolve('');
    const q = question('').question;
    for (const vote of votes) {
      expect(vote.searches).toBe(1);
      expect(vote.search).toBe('on');
      expect(vote.evidence).toEqual([
        {
          kind: 'web',
          url: expect.stringMatching(/^https:\/\/example\.com\/sandbox\/[0-9a-f]{16}$/),
          title: 'Sandbox source',
          quote: `A simulated source on the question: ${q}`,
          retrievedAt: '2026-12-07T12:00:00.000Z',
        },
      ]);
    }
    expect(new Set(votes.map((v) => JSON.stringify(v.evidence))).size).toBe(1);
    expect((await resolve('')).votes[0]?.evidence).toEqual(votes[0]?.evidence);
  });

  it('[sandbox:evidence=none] cites nothing and reports no search', async () => {
    const { votes, consensus } = await resolve('[sandbox:evidence=none]');
    expect(votes.map((v) => [v.evidence, v.searches])).toEqual([
      [[], 0],
      [[], 0],
      [[], 0],
      [[], 0],
    ]);
    expect(consensus.canDetermine).toBe(true);
  });

  it('[sandbox:abstain=too_early] makes the four abstain with that reason, and the result says it', async () => {
    const { votes, consensus } = await resolve('[sandbox:abstain=too_early]');
    expect(votes.map((v) => [v.outcomeIndex, v.abstainReason, v.error])).toEqual([
      [null, 'too_early', null],
      [null, 'too_early', null],
      [null, 'too_early', null],
      [null, 'too_early', null],
    ]);
    expect(consensus).toMatchObject({
      status: 'COMPLETED',
      winningOutcomeIndex: null,
      canDetermine: false,
      abstainReason: 'too_early',
    });
  });

  it('"?" in [sandbox:votes] abstains as insufficient_evidence; a failing slot has no reason and no evidence', async () => {
    const { votes, consensus } = await resolve('[sandbox:votes=?,?,?,x]');
    expect(votes.map((v) => [v.abstainReason, v.evidence.length])).toEqual([
      ['insufficient_evidence', 1],
      ['insufficient_evidence', 1],
      ['insufficient_evidence', 1],
      [null, 0],
    ]);
    expect(consensus.abstainReason).toBe('insufficient_evidence');
  });

  it('without directives all four vote the hashed outcome with confidence 0.9', async () => {
    const { votes, consensus } = await resolve('');
    const expected = sandboxOutcome(question('').question, 3);
    expect(votes.map((v) => [v.model, v.outcomeIndex, v.confidence])).toEqual([
      ['sandbox/alpha', expected, 0.9],
      ['sandbox/beta', expected, 0.9],
      ['sandbox/gamma', expected, 0.9],
      ['sandbox/delta', expected, 0.9],
    ]);
    expect(consensus).toMatchObject({
      status: 'COMPLETED',
      winningOutcomeIndex: expected,
      canDetermine: true,
    });
    // Deterministic: the same question, the same answer.
    expect((await resolve('')).consensus).toEqual(consensus);
  });

  it('[sandbox:votes=1,1,1,0] gives outcome 1, agreement 0.75, canDetermine true', async () => {
    const { consensus } = await resolve('[sandbox:votes=1,1,1,0]');
    expect(consensus).toMatchObject({
      status: 'COMPLETED',
      winningOutcomeIndex: 1,
      winningOutcomeLabel: 'No',
      agreement: 0.75,
      confidence: 0.9,
      canDetermine: true,
      modelsUsed: ['sandbox/alpha', 'sandbox/beta', 'sandbox/gamma', 'sandbox/delta'],
    });
  });

  it('[sandbox:votes=0,0,x,x] fails', async () => {
    const { votes, consensus } = await resolve('[sandbox:votes=0,0,x,x]');
    expect(consensus.status).toBe('FAILED');
    expect(votes[2]?.error).toEqual({
      kind: 'http_error',
      message: 'HTTP 503 (simulated by [sandbox:votes])',
    });
  });

  it('[sandbox:confidence=0.6] keeps 4/4 agreement below the default threshold', async () => {
    const { consensus } = await resolve('[sandbox:votes=2,2,2,2][sandbox:confidence=0.6]');
    expect(consensus).toMatchObject({
      winningOutcomeIndex: 2,
      agreement: 1,
      confidence: 0.6,
      canDetermine: false,
    });
  });

  it('an index outside the outcomes is that model answering out of range: it fails, it is not a vote', async () => {
    const { votes, consensus } = await resolve('[sandbox:votes=7,1,1,1]');
    expect(votes[0]?.error).toEqual({ kind: 'invalid_answer', message: 'outcomeIndex 7 is outside 0..2' });
    expect(consensus).toMatchObject({ status: 'COMPLETED', winningOutcomeIndex: 1, agreement: 0.75 });
  });

  it('[sandbox:delay] beyond the deadline times every model out', async () => {
    const { votes, consensus } = await resolveWithModels(
      createSandboxModels(5000),
      question('[sandbox:delay=2000]'),
      { confidenceThreshold: 0.75, deadlineMs: 100, retries: 0, clock: new ManualClock() },
    );
    expect(votes.map((v) => v.error?.kind)).toEqual(['timeout', 'timeout', 'timeout', 'timeout']);
    expect(consensus.status).toBe('FAILED');
  });
});
