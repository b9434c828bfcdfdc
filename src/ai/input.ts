import type { ValidationProblem } from '../errors.js';
import { isBlankLabel, labelKey } from '../lib/labels.js';
import { parseSandboxDirectives } from './sandbox.js';
import type { ResolutionQuestion } from './types.js';

/** The input limits of docs/ai.md#limits, in characters (Unicode code points). */
export const LIMITS = {
  questionMaxChars: 1000,
  minOutcomes: 2,
  maxOutcomes: 20,
  outcomeMaxChars: 200,
  contextMaxChars: 10_000,
} as const;

function chars(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** Where each part of a question came from, for the problems' paths. */
export interface QuestionPaths {
  question: string;
  outcomes: string;
  context: string;
}

export const BODY_PATHS: QuestionPaths = {
  question: 'body.question',
  outcomes: 'body.outcomes',
  context: 'body.context',
};

/**
 * Every problem with a question, its outcomes and its context, all at once. The HTTP schema already
 * checks types and lengths; this also covers questions that do not come through it (a market's
 * title and outcome labels) and what a schema cannot say: blank text (invisible code points alone
 * are blank), NUL characters, labels that differ only in case, surrounding spaces, invisible code
 * points or look-alike characters (labelKey), and — for sandbox resolutions — unreadable
 * `[sandbox:…]` directives.
 */
export function checkQuestion(
  input: ResolutionQuestion,
  options: { sandbox: boolean; paths: QuestionPaths },
): ValidationProblem[] {
  const { paths } = options;
  const problems: ValidationProblem[] = [];
  const text = (value: string, path: string, max: number, allowEmpty: boolean) => {
    const n = chars(value);
    if (!allowEmpty && isBlankLabel(value)) problems.push({ path, message: 'must not be blank' });
    else if (n > max) problems.push({ path, message: `must be at most ${max} characters (got ${n})` });
    if (value.includes('\u0000')) problems.push({ path, message: 'must not contain NUL characters' });
  };
  text(input.question, paths.question, LIMITS.questionMaxChars, false);
  const { outcomes } = input;
  if (outcomes.length < LIMITS.minOutcomes || outcomes.length > LIMITS.maxOutcomes) {
    problems.push({
      path: paths.outcomes,
      message: `must list ${LIMITS.minOutcomes} to ${LIMITS.maxOutcomes} outcomes (got ${outcomes.length})`,
    });
  }
  const seen = new Map<string, number>();
  outcomes.forEach((label, index) => {
    const path = `${paths.outcomes}[${index}]`;
    text(label, path, LIMITS.outcomeMaxChars, false);
    const key = labelKey(label);
    const first = seen.get(key);
    if (first !== undefined && !isBlankLabel(label)) {
      problems.push({ path, message: `repeats outcome ${first} (labels must be distinct)` });
    } else seen.set(key, index);
  });
  const context = input.context ?? '';
  text(context, paths.context, LIMITS.contextMaxChars, true);
  if (options.sandbox) {
    for (const message of parseSandboxDirectives(context).problems) {
      problems.push({ path: paths.context, message });
    }
  }
  return problems;
}
