import type { AccountMode } from '../accounts/index.js';
import type { Resolver, Vote } from '../ai/index.js';
import { type AnswerCache, cacheKey, isCacheable } from './cache.js';
import type { LabelledQuestion } from './labelled-set.js';
import type { QuestionResult } from './metrics.js';

export interface EvaluateOptions {
  resolver: Pick<Resolver, 'models' | 'resolve'>;
  mode: AccountMode;
  /** The set's questions in order, read as they are needed (an array, or a stream of the file). */
  questions: Iterable<LabelledQuestion> | AsyncIterable<LabelledQuestion>;
  concurrency: number;
  confidenceThreshold: number;
  cache: AnswerCache;
  /** `--search off`: the providers' own web search is off on every call (default on). */
  search?: 'on' | 'off';
  /** Each question answered, in the set's order; nothing else keeps it. */
  onResult: (result: QuestionResult) => void | Promise<void>;
  /** Ctrl-C: no question is started after it, and the ones being asked are left out. */
  signal?: AbortSignal;
  onProgress?: (done: number) => void;
}

export interface Evaluation {
  /** Questions answered (given to `onResult`). */
  answered: number;
  interrupted: boolean;
  cachedAnswers: number;
  askedAnswers: number;
}

/**
 * Runs each question through the resolver of `POST /ai/resolve` — the same prompt, models,
 * deadline and consensus — at most `concurrency` at once, no ledger involved. A model's answer
 * found in the cache is passed as already known (as a resumed resolution's stored votes are), so
 * it is not asked again; each new answer is cached the moment it arrives.
 *
 * What it holds does not grow with the set (docs/ai.md#evaluating-a-large-set): the questions are
 * pulled from `questions` as workers free up, and each result is handed to `onResult` and dropped.
 * Results that finish out of order wait only until those before them finish, so `onResult` sees
 * the set's order.
 */
export async function evaluateSet(options: EvaluateOptions): Promise<Evaluation> {
  const { signal } = options;
  const models = options.resolver.models(options.mode);
  const source: Iterator<LabelledQuestion> | AsyncIterator<LabelledQuestion> =
    Symbol.asyncIterator in options.questions
      ? options.questions[Symbol.asyncIterator]()
      : options.questions[Symbol.iterator]();
  let next = 0;
  let exhausted = false;
  let done = 0;
  let answered = 0;
  let cachedAnswers = 0;
  let askedAnswers = 0;
  // Results that finished before an earlier question did, by index, until it does.
  const waiting = new Map<number, QuestionResult | null>();
  let emitted = 0;
  let emitting: Promise<void> = Promise.resolve();

  /** One question; null when Ctrl-C came first (its result is left out). */
  const one = async (q: LabelledQuestion): Promise<QuestionResult | null> => {
    const data = { question: q.question, outcomes: q.outcomes, context: q.context };
    const keys = models.map((m) => cacheKey(m.name, data, options.search));
    const known = new Map<number, Vote>();
    keys.forEach((key, position) => {
      const vote = options.cache.get(key);
      if (vote) known.set(position, { ...vote, position });
    });
    cachedAnswers += known.size;
    const resolution = options.resolver.resolve(options.mode, data, {
      confidenceThreshold: options.confidenceThreshold,
      ...(options.search === 'off' ? { webSearch: false } : {}),
      known,
      onVote: async (vote) => {
        askedAnswers++;
        if (isCacheable(vote)) options.cache.put(keys[vote.position] as string, vote);
      },
    });
    // A listener added and removed per question: a race against one shared "aborted" promise
    // would leave every question's reaction (and its result) attached to it until the run ends.
    let onAbort = () => {};
    const aborted = new Promise<null>((resolve) => {
      onAbort = () => resolve(null);
      if (signal?.aborted) resolve(null);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const settled = await Promise.race([resolution, aborted]);
      if (settled === null) return null;
      return { id: q.id, category: q.category, outcomes: q.outcomes, answer: q.answer, votes: settled.votes };
    } finally {
      signal?.removeEventListener('abort', onAbort);
      onAbort();
    }
  };

  /** Hands on every result whose predecessors are all in; `final` also skips what never finished. */
  const flush = (final: boolean) => {
    emitting = emitting.then(async () => {
      for (;;) {
        if (!waiting.has(emitted)) {
          if (!final || waiting.size === 0) return;
          emitted = Math.min(...waiting.keys());
          continue;
        }
        const result = waiting.get(emitted);
        waiting.delete(emitted);
        emitted++;
        if (result) {
          answered++;
          await options.onResult(result);
        }
      }
    });
    return emitting;
  };

  const take = async (): Promise<{ index: number; question: LabelledQuestion } | null> => {
    if (exhausted || signal?.aborted) return null;
    const index = next++;
    const item = await source.next();
    if (item.done) {
      exhausted = true;
      return null;
    }
    return { index, question: item.value };
  };

  const worker = async () => {
    for (;;) {
      const item = await take();
      if (!item) return;
      const result = await one(item.question);
      waiting.set(item.index, result);
      if (result === null) return;
      done++;
      options.onProgress?.(done);
      await flush(false);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
    await flush(true);
  } finally {
    if (!exhausted) await source.return?.();
  }
  return { answered, interrupted: !exhausted, cachedAnswers, askedAnswers };
}
