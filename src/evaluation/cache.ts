import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ResolutionQuestion, Vote } from '../ai/index.js';

/**
 * Failures that say nothing lasting about the question: a rerun asks those models again. Every
 * other answer — a vote, "cannot determine", an answer that broke the schema — is kept.
 */
const TRANSIENT = new Set([
  'timeout',
  'network',
  'rate_limited',
  'http_error',
  'not_configured',
  'abandoned',
]);

export function isCacheable(vote: Vote): boolean {
  return vote.error === null || !TRANSIENT.has(vote.error.kind);
}

/** The key of one model's answer to one question: the model and everything it is sent of the question. */
export function cacheKey(model: string, question: ResolutionQuestion): string {
  return createHash('sha256')
    .update(JSON.stringify([model, question.question, question.outcomes, question.context]))
    .digest('base64url');
}

export interface AnswerCache {
  readonly path: string;
  get(key: string): Vote | undefined;
  put(key: string, vote: Vote): void;
  /** Flushes what was put; the cache is then closed. */
  close(): Promise<void>;
}

/**
 * Each model's answers, per model and question text (docs/ai.md#the-answer-cache): a JSON Lines
 * file read whole at the start and appended to as answers arrive, so an interrupted run keeps every
 * answer it was given. A last line cut short by a crash is ignored.
 */
export async function openAnswerCache(path: string): Promise<AnswerCache> {
  const entries = new Map<string, Vote>();
  const text = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return '';
    throw err;
  });
  for (const line of text.split('\n')) {
    if (!line) continue;
    try {
      const { k, vote } = JSON.parse(line) as { k: string; vote: Vote };
      if (typeof k === 'string' && vote && typeof vote.model === 'string') entries.set(k, vote);
    } catch {
      // A line cut short by a crash: that answer is asked again.
    }
  }
  await mkdir(dirname(path), { recursive: true });
  const stream = createWriteStream(path, { flags: 'a' });
  await once(stream, 'open');
  return {
    path,
    get: (key) => entries.get(key),
    put(key, vote) {
      entries.set(key, vote);
      stream.write(`${JSON.stringify({ k: key, vote })}\n`);
    },
    close: () =>
      new Promise<void>((resolve, reject) =>
        stream.end((err?: Error | null) => (err ? reject(err) : resolve())),
      ),
  };
}
