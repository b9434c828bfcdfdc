import { open, readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import {
  isRecord,
  type LabelledQuestion,
  type LabelledSet,
  parseJsonFile,
  setError,
} from './labelled-set.js';
import { type JsonFile, readForecastBench } from './read-forecastbench.js';
import { readJsonLines, streamJsonLines } from './read-jsonl.js';
import { readUmaProposals } from './read-uma.js';

const UMA_FILE = /^questionId_.*\.json$/;

async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw setError(
      path,
      null,
      null,
      code === 'ENOENT' ? 'no such file' : `cannot be read (${code ?? 'error'})`,
    );
  }
}

/** A file that is one JSON document (pretty-printed or not), as opposed to JSON Lines. */
function isJsonDocument(text: string): boolean {
  const first = text.trimStart().split('\n', 1)[0]?.trim() ?? '';
  if (first === '{' || first === '[' || first.startsWith('[')) return true;
  // A one-line file: a document unless it is one JSON Lines question.
  if (text.trim().includes('\n')) return false;
  try {
    const value = JSON.parse(text);
    return !(isRecord(value) && 'question' in value);
  } catch {
    return false;
  }
}

type Kind = 'questions' | 'resolutions' | 'uma' | 'other';

function kindOf(value: unknown): Kind {
  if (isRecord(value) && Array.isArray(value.questions)) return 'questions';
  if (isRecord(value) && Array.isArray(value.resolutions)) return 'resolutions';
  const first = Array.isArray(value) ? value[0] : value;
  if (isRecord(first) && 'ancillary_data' in first) return 'uma';
  return 'other';
}

async function readDocument(
  path: string,
): Promise<{ name: string; text: string; value: unknown; kind: Kind }> {
  const text = await readText(path);
  const value = parseJsonFile(path, text);
  return { name: path, text, value, kind: kindOf(value) };
}

function forecastBench(files: { name: string; value: unknown; kind: Kind }[]): LabelledSet {
  const questions = files.filter((f) => f.kind === 'questions');
  const resolutions = files.filter((f) => f.kind === 'resolutions');
  if (questions.length !== 1 || resolutions.length !== 1) {
    throw setError(
      files[0]?.name ?? 'set',
      null,
      null,
      'a ForecastBench set is one question set ({ "questions": [...] }) and one resolution set ({ "resolutions": [...] })',
    );
  }
  return readForecastBench(questions[0] as JsonFile, resolutions[0] as JsonFile);
}

/**
 * Reads a labelled set from a file, a folder, or a ForecastBench question set and resolution set
 * given as two files, telling the format by content (docs/ai.md#labelled-sets). Every question is
 * checked before any is asked: a set with a bad entry is one error naming its file, line and field.
 */
export async function readLabelledSet(paths: readonly string[]): Promise<LabelledSet> {
  if (paths.length === 2) return forecastBench(await Promise.all(paths.map(readDocument)));
  if (paths.length !== 1)
    throw setError(paths.join(' '), null, null, 'give one set: a file, a folder, or two ForecastBench files');
  const path = paths[0] as string;
  const info = await stat(path).catch(() => null);
  if (!info) throw setError(path, null, null, 'no such file or folder');
  if (info.isDirectory()) return readFolder(path);

  const text = await readText(path);
  if (!isJsonDocument(text)) return readJsonLines(path, text);
  const value = parseJsonFile(path, text);
  const kind = kindOf(value);
  if (kind === 'uma') return readUmaProposals([{ name: path, text }]);
  if (kind === 'resolutions' && isRecord(value) && typeof value.question_set === 'string') {
    // A resolution set names its question set; it is looked for beside it.
    const questionsPath = join(dirname(path), basename(value.question_set));
    return forecastBench([{ name: path, value, kind }, await readDocument(questionsPath)]);
  }
  if (kind === 'questions' || kind === 'resolutions') {
    throw setError(
      path,
      null,
      null,
      'a ForecastBench set needs both its question set and its resolution set: give both files, or their folder',
    );
  }
  return readJsonLines(path, text);
}

async function readFolder(path: string): Promise<LabelledSet> {
  const names = (await readdir(path)).sort();
  const uma = names.filter((n) => UMA_FILE.test(n));
  if (uma.length > 0) {
    const files = await Promise.all(
      uma.map(async (n) => ({ name: join(path, n), text: await readText(join(path, n)) })),
    );
    return readUmaProposals(files);
  }
  const jsonl = names.filter((n) => n.endsWith('.jsonl'));
  const json = names.filter((n) => n.endsWith('.json'));
  if (json.length > 0) {
    const documents = await Promise.all(json.map((n) => readDocument(join(path, n))));
    const fb = documents.filter((d) => d.kind === 'questions' || d.kind === 'resolutions');
    if (fb.length > 0) return forecastBench(fb);
  }
  if (jsonl.length === 1) {
    const file = join(path, jsonl[0] as string);
    return readJsonLines(file, await readText(file));
  }
  throw setError(
    path,
    null,
    null,
    'holds no labelled set (JSON Lines, questionId_*.json proposals, or a ForecastBench question and resolution set)',
  );
}

/** A set ready to evaluate: what the report says of it, and its questions in order. */
export interface OpenedSet {
  format: LabelledSet['format'];
  skipped: Record<string, number>;
  count: number;
  questions(): Iterable<LabelledQuestion> | AsyncIterable<LabelledQuestion>;
}

/** Whether a file is JSON Lines by its first line: a complete JSON object with a `question`. */
async function startsAsJsonLines(path: string): Promise<boolean> {
  const file = await open(path, 'r').catch(() => null);
  if (!file) return false;
  try {
    const head = Buffer.alloc(256 * 1024);
    const { bytesRead } = await file.read(head, 0, head.length, 0);
    const text = head.subarray(0, bytesRead).toString('utf8');
    const first = text.split('\n').find((line) => line.trim() !== '');
    const complete =
      first !== undefined && text.indexOf('\n') !== -1 && text.indexOf(first) < text.lastIndexOf('\n');
    if (!complete || first === undefined) return false;
    const value: unknown = JSON.parse(first);
    return isRecord(value) && 'question' in value;
  } catch {
    return false;
  } finally {
    await file.close();
  }
}

/**
 * Opens a labelled set for `sibyl ai evaluate`: a JSON Lines file is checked whole and then read
 * as a stream while it is evaluated, never held (docs/ai.md#evaluating-a-large-set); the other
 * formats (a folder of proposals, a ForecastBench pair: JSON documents read whole anyway) are read
 * as readLabelledSet reads them.
 */
export async function openLabelledSet(paths: readonly string[]): Promise<OpenedSet> {
  const path = paths[0];
  if (paths.length === 1 && path !== undefined) {
    const info = await stat(path).catch(() => null);
    if (info?.isFile() && (await startsAsJsonLines(path))) {
      const set = await streamJsonLines(path);
      return { format: set.format, skipped: set.skipped, count: set.count, questions: () => set.questions() };
    }
  }
  const set = await readLabelledSet(paths);
  return {
    format: set.format,
    skipped: set.skipped,
    count: set.questions.length,
    questions: () => set.questions,
  };
}
