import { AppError } from '../errors.js';

/** One question of a labelled set, as the resolver is asked it, with the answer known to be right. */
export interface LabelledQuestion {
  /** The set's own id of the question. */
  id: string;
  question: string;
  outcomes: string[];
  /** Empty when none was given. */
  context: string;
  /** The index of the outcome that happened; null: nothing can be known, the right answer is to abstain. */
  answer: number | null;
  /** `uncategorised` when the set gives none. */
  category: string;
}

export const SET_FORMATS = ['jsonl', 'uma', 'forecastbench'] as const;
export type SetFormat = (typeof SET_FORMATS)[number];

/** A labelled set as read: its questions, and the entries it holds that cannot be evaluated. */
export interface LabelledSet {
  format: SetFormat;
  questions: LabelledQuestion[];
  /** Entries left out, by reason (a 50-50 UMA answer, a ForecastBench combination question, …). */
  skipped: Record<string, number>;
}

/**
 * Where a labelled set cannot be read: the file, the line (1-based) and the field, so the operator
 * can fix it. Nothing is evaluated and nothing written when a set has one.
 */
export function setError(file: string, line: number | null, field: string | null, message: string): AppError {
  const where = [file, line === null ? null : `line ${line}`, field === null ? null : `"${field}"`]
    .filter(Boolean)
    .join(', ');
  return new AppError('VALIDATION_ERROR', `${where}: ${message}`, {
    details: { file, ...(line === null ? {} : { line }), ...(field === null ? {} : { field }) },
  });
}

/** The 1-based line of a character offset in a text. */
export function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/**
 * Parses a whole JSON file; a syntax error names its line (V8 says `at position N`, or
 * `(line L column C)` in newer versions).
 */
export function parseJsonFile(file: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const lineColumn = /line (\d+) column/.exec(message);
    const position = /position (\d+)/.exec(message);
    const line = lineColumn ? Number(lineColumn[1]) : position ? lineAt(text, Number(position[1])) : null;
    throw setError(file, line, null, 'is not valid JSON');
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function countSkip(skipped: Record<string, number>, reason: string): void {
  skipped[reason] = (skipped[reason] ?? 0) + 1;
}
