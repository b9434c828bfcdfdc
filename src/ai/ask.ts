import { setTimeout as sleep } from 'node:timers/promises';
import type { ToolSet } from 'ai';
import type { Clock } from '../lib/clock.js';
import { metrics } from '../metrics/metrics.js';
import { checkAnswer } from './answer.js';
import { checkEvidence } from './evidence.js';
import {
  ModelError,
  type ModelPrompt,
  type RawAnswer,
  type ResolutionModel,
  type SearchMode,
  type Vote,
} from './types.js';

export interface AskOptions {
  /** Aborts when the resolution's deadline passes: every call still running then fails as a timeout. */
  deadline: AbortSignal;
  /** When the deadline passes, in `performance.now()` milliseconds: a retry that cannot finish before it is not tried. */
  deadlineAt: number;
  /** Further attempts after a rate limit, an overload or a network error. */
  retries: number;
  /** When an answer arrived: the retrieval time of a citation that gives none. */
  clock: Clock;
  /** Sibyl's tools for one model call, answering within its signal; absent: the models get none. */
  tools?: ((signal: AbortSignal) => ToolSet) | undefined;
}

/** A valid answer's evidence and searches, checked; what was dropped is counted (never stored). */
function evidenceOf(raw: RawAnswer, clock: Clock): Pick<Vote, 'evidence' | 'searches'> {
  const { evidence, dropped } = checkEvidence(raw.evidence, clock.now());
  for (const [reason, count] of Object.entries(dropped)) metrics.evidenceDropped(reason, count);
  const searches =
    typeof raw.searches === 'number' && Number.isInteger(raw.searches) && raw.searches >= 0
      ? raw.searches
      : null;
  return { evidence, searches };
}

/** Waiting used when a retryable failure carries no hint. */
const DEFAULT_RETRY_WAIT_MS = 500;

function failureOf(err: unknown, timeoutMs: number, deadline: AbortSignal): ModelError {
  if (err instanceof ModelError) return err;
  // The call's own signal aborted: its timeout or the resolution's deadline.
  if (deadline.aborted) return new ModelError('timeout', 'no answer before the resolution deadline');
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) {
    return new ModelError('timeout', `no answer within ${timeoutMs} ms`);
  }
  return new ModelError('bad_response', 'the call failed unexpectedly');
}

/**
 * Asks one model, with its own timeout inside the resolution's deadline, and turns whatever comes
 * back into a Vote: a schema-valid answer, or the reason there is none. Never throws. Rate limits
 * and overloads are retried when the provider's hint (or a short default wait) ends before the
 * deadline; otherwise the model fails at once rather than sleeping past it.
 */
export async function askModel(
  model: ResolutionModel,
  position: number,
  prompt: ModelPrompt,
  options: AskOptions,
): Promise<Vote> {
  const started = performance.now();
  const search: SearchMode = model.searchMode?.(prompt) ?? 'unavailable';
  const base = { position, model: model.name, search };
  for (let attempt = 0; ; attempt++) {
    const signal = AbortSignal.any([options.deadline, AbortSignal.timeout(model.timeoutMs)]);
    try {
      // Each call its own tools: their count of calls starts again, their answers end with its signal.
      const raw = await model.ask(
        options.tools ? { ...prompt, tools: options.tools(signal) } : prompt,
        signal,
      );
      if (raw.finishReason === 'length') {
        throw new ModelError('truncated', 'the answer was cut off by the output-token cap', {
          usage: raw.usage,
        });
      }
      let answer: ReturnType<typeof checkAnswer>;
      try {
        answer = checkAnswer(raw.value, prompt.data.outcomes.length);
      } catch (err) {
        throw err instanceof ModelError
          ? new ModelError(err.kind, err.message, { usage: raw.usage })
          : new ModelError('invalid_answer', 'the answer could not be checked', { usage: raw.usage });
      }
      return {
        ...base,
        ...answer,
        latencyMs: Math.round(performance.now() - started),
        error: null,
        usage: raw.usage,
        ...evidenceOf(raw, options.clock),
      };
    } catch (err) {
      const failure = failureOf(err, model.timeoutMs, options.deadline);
      const wait = failure.details.retryAfterMs ?? DEFAULT_RETRY_WAIT_MS;
      const room = options.deadlineAt - performance.now();
      if (failure.details.retryable && attempt < options.retries && wait < room) {
        try {
          await sleep(wait, undefined, { signal: options.deadline });
          continue;
        } catch {
          // The deadline passed while waiting: report the failure that made us wait.
        }
      }
      return {
        ...base,
        outcomeIndex: null,
        confidence: null,
        reasoning: null,
        latencyMs: Math.round(performance.now() - started),
        error: { kind: failure.kind, message: failure.message },
        usage: failure.details.usage ?? null,
        evidence: [],
        searches: null,
        abstainReason: null,
      };
    }
  }
}

export interface AskModelsOptions {
  /** How long the whole fan-out may take. */
  deadlineMs: number;
  retries: number;
  clock: Clock;
  /** Answers already stored for some positions (a resumed resolution): those models are not asked again. */
  known?: ReadonlyMap<number, Vote>;
  /** Called with each new vote as it arrives (before the others finish), e.g. to store it. */
  onVote?: (vote: Vote) => Promise<void>;
  /** Sibyl's tools for each model call (AskOptions.tools). */
  tools?: ((signal: AbortSignal) => ToolSet) | undefined;
}

/**
 * Asks every model not already answered, all at once, under one deadline: a slow or failing
 * provider never holds up the others beyond it. Returns the four votes in slot order.
 */
export async function askModels(
  models: readonly ResolutionModel[],
  prompt: ModelPrompt,
  options: AskModelsOptions,
): Promise<Vote[]> {
  const deadline = AbortSignal.timeout(options.deadlineMs);
  const deadlineAt = performance.now() + options.deadlineMs;
  return Promise.all(
    models.map(async (model, position) => {
      const known = options.known?.get(position);
      if (known) return known;
      const vote = await askModel(model, position, prompt, {
        deadline,
        deadlineAt,
        retries: options.retries,
        clock: options.clock,
        tools: options.tools,
      });
      await options.onVote?.(vote);
      return vote;
    }),
  );
}
