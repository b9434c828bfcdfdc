import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { BODY_PATHS, checkQuestion } from '../ai/index.js';
import { labelKey } from '../lib/labels.js';
import { isRecord, type LabelledQuestion, type LabelledSet, setError } from './labelled-set.js';

/**
 * The project's own format (docs/ai.md#labelled-sets): one JSON object a line,
 * `{ id, question, outcomes, context?, answer, category? }`, `answer` an outcome index, an outcome
 * label, or null for a question whose right answer is to abstain. Blank lines are ignored.
 */
export function readJsonLines(file: string, text: string): LabelledSet {
  const questions: LabelledQuestion[] = [];
  const ids = new Map<string, number>();
  text.split('\n').forEach((raw, i) => {
    const question = lineQuestion(file, i + 1, raw, ids);
    if (question) questions.push(question);
  });
  if (questions.length === 0) throw setError(file, null, null, 'holds no questions');
  return { format: 'jsonl', questions, skipped: {} };
}

/** The question of one line (null for a blank one); `ids` (id → line) finds a repeated id. */
function lineQuestion(
  file: string,
  line: number,
  raw: string,
  ids?: Map<string, number>,
): LabelledQuestion | null {
  if (raw.trim() === '') return null;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw setError(file, line, null, 'is not a JSON object');
  }
  if (!isRecord(value)) throw setError(file, line, null, 'is not a JSON object');
  const question = readQuestion(file, line, value);
  if (ids) {
    const first = ids.get(question.id);
    if (first !== undefined) throw setError(file, line, 'id', `repeats the id of line ${first}`);
    ids.set(question.id, line);
  }
  return question;
}

async function* fileLines(file: string): AsyncGenerator<string> {
  const lines = createInterface({
    input: createReadStream(file, 'utf8'),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  try {
    for await (const line of lines) yield line;
  } finally {
    lines.close();
  }
}

/** A JSON Lines set read as a stream: checked whole first, then read again question by question. */
export interface StreamedSet {
  format: 'jsonl';
  skipped: Record<string, number>;
  count: number;
  questions(): AsyncGenerator<LabelledQuestion>;
}

/**
 * A JSON Lines set too large to hold: every line is checked first (one pass keeping only the ids,
 * for repeats), so a bad line stops the run before anything is asked; the questions are then read
 * again one at a time as the evaluation takes them, and not kept.
 */
export async function streamJsonLines(file: string): Promise<StreamedSet> {
  const ids = new Map<string, number>();
  let line = 0;
  for await (const raw of fileLines(file)) lineQuestion(file, ++line, raw, ids);
  const count = ids.size;
  ids.clear();
  if (count === 0) throw setError(file, null, null, 'holds no questions');
  return {
    format: 'jsonl',
    skipped: {},
    count,
    async *questions() {
      let at = 0;
      for await (const raw of fileLines(file)) {
        const question = lineQuestion(file, ++at, raw);
        if (question) yield question;
      }
    },
  };
}

function readQuestion(file: string, line: number, value: Record<string, unknown>): LabelledQuestion {
  const fail = (field: string, message: string) => setError(file, line, field, message);
  const { id, question, outcomes, context, answer, category } = value;
  if (typeof id !== 'string' && typeof id !== 'number') throw fail('id', 'must be a string or a number');
  if (typeof question !== 'string') throw fail('question', 'must be a string');
  if (!Array.isArray(outcomes) || !outcomes.every((o) => typeof o === 'string')) {
    throw fail('outcomes', 'must be an array of strings');
  }
  if (context !== undefined && context !== null && typeof context !== 'string') {
    throw fail('context', 'must be a string');
  }
  if (
    category !== undefined &&
    category !== null &&
    (typeof category !== 'string' || category.trim() === '')
  ) {
    throw fail('category', 'must be a non-empty string');
  }
  const checked = {
    question,
    outcomes: outcomes as string[],
    context: (context as string | undefined) ?? '',
  };
  const [problem] = checkQuestion(checked, { sandbox: false, paths: BODY_PATHS });
  if (problem) throw fail(problem.path.replace(/^body\./, ''), problem.message);
  return {
    id: String(id),
    ...checked,
    answer: answerIndex(checked.outcomes, answer, fail),
    category: (category as string | undefined)?.trim() ?? 'uncategorised',
  };
}

/** An answer given as an index or as a label (matched as the API matches labels: labelKey). */
export function answerIndex(
  outcomes: readonly string[],
  answer: unknown,
  fail: (field: string, message: string) => Error,
): number | null {
  if (answer === null) return null;
  if (typeof answer === 'number') {
    if (Number.isInteger(answer) && answer >= 0 && answer < outcomes.length) return answer;
    throw fail('answer', `must be an outcome index from 0 to ${outcomes.length - 1} (got ${answer})`);
  }
  if (typeof answer === 'string') {
    const key = labelKey(answer);
    const index = outcomes.findIndex((o) => labelKey(o) === key);
    if (index >= 0) return index;
    throw fail('answer', `"${answer}" is not one of the outcomes`);
  }
  throw fail(
    'answer',
    answer === undefined ? 'is missing' : 'must be an outcome index, an outcome label or null',
  );
}
