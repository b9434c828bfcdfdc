import type { AccountMode } from '../accounts/index.js';
import type { Resolver, Vote } from '../ai/index.js';
import { type AnswerCache, cacheKey, isCacheable } from './cache.js';
import type { LabelledQuestion } from './labelled-set.js';
import type { QuestionResult } from './metrics.js';

export interface EvaluateOptions {
  resolver: Pick<Resolver, 'models' | 'resolve'>;
  mode: AccountMode;
  questions: readonly LabelledQuestion[];
  concurrency: number;
  confidenceThreshold: number;
  cache: AnswerCache;
  /** Ctrl-C: no question is started after it, and the ones being asked are left out. */
  signal?: AbortSignal;
  onProgress?: (done: number) => void;
}

export interface Evaluation {
  /** The questions answered, in the set's order. */
  results: QuestionResult[];
  interrupted: boolean;
  cachedAnswers: number;
  askedAnswers: number;
}

/**
 * Runs each question through the resolver of `POST /ai/resolve` — the same prompt, models,
 * deadline and consensus — at most `concurrency` at once, no ledger involved. A model's answer
 * found in the cache is passed as already known (as a resumed resolution's stored votes are), so
 * it is not asked again; each new answer is cached the moment it arrives.
 */
export async function evaluateSet(options: EvaluateOptions): Promise<Evaluation> {
  const { questions, signal } = options;
  const results: (QuestionResult | undefined)[] = new Array(questions.length);
  const models = options.resolver.models(options.mode);
  let next = 0;
  let done = 0;
  let cachedAnswers = 0;
  let askedAnswers = 0;
  const aborted = new Promise<'aborted'>((resolve) => {
    if (signal?.aborted) resolve('aborted');
    signal?.addEventListener('abort', () => resolve('aborted'), { once: true });
  });

  const one = async (q: LabelledQuestion): Promise<QuestionResult | 'aborted'> => {
    const data = { question: q.question, outcomes: q.outcomes, context: q.context };
    const keys = models.map((m) => cacheKey(m.name, data));
    const known = new Map<number, Vote>();
    keys.forEach((key, position) => {
      const vote = options.cache.get(key);
      if (vote) known.set(position, { ...vote, position });
    });
    cachedAnswers += known.size;
    const resolution = options.resolver.resolve(options.mode, data, {
      confidenceThreshold: options.confidenceThreshold,
      known,
      onVote: async (vote) => {
        askedAnswers++;
        if (isCacheable(vote)) options.cache.put(keys[vote.position] as string, vote);
      },
    });
    const settled = await Promise.race([resolution, aborted]);
    if (settled === 'aborted') return 'aborted';
    return { id: q.id, category: q.category, outcomes: q.outcomes, answer: q.answer, votes: settled.votes };
  };

  const worker = async () => {
    while (!signal?.aborted && next < questions.length) {
      const index = next++;
      const result = await one(questions[index] as LabelledQuestion);
      if (result === 'aborted') return;
      results[index] = result;
      done++;
      options.onProgress?.(done);
    }
  };
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(options.concurrency, questions.length)) }, worker),
  );
  return {
    results: results.filter((r): r is QuestionResult => r !== undefined),
    interrupted: done < questions.length,
    cachedAnswers,
    askedAnswers,
  };
}
