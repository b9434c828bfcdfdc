import {
  APICallError,
  generateText,
  JSONParseError,
  jsonSchema,
  type LanguageModel,
  type LanguageModelUsage,
  NoObjectGeneratedError,
  Output,
  stepCountIs,
  type Tool,
} from 'ai';
import type { Clock } from '../../lib/clock.js';
import type { ModelSlot } from '../config.js';
import {
  ModelError,
  type ModelPrompt,
  type RawAnswer,
  type ResolutionModel,
  type SearchMode,
  type TokenUsage,
} from '../types.js';
import {
  ANSWER_NOW,
  addCount,
  evidenceOfSteps,
  MAX_STEPS,
  mergeOptions,
  notesOf,
  plan,
  type SdkModelOptions,
  WEB_SEARCH,
} from './grounding.js';
import { PAUSE_TURN, researchResumed } from './resume.js';

// The SDK prints its warnings (say, a parameter a model ignores) to the console; the service's
// output is its structured log only.
globalThis.AI_SDK_LOG_WARNINGS = false;

/** What every adapter hands its SDK provider: no redirects followed, and the clock for retry dates. */
export interface AdapterDeps {
  fetch: typeof fetch;
  clock: Clock;
}

function usageOf(usage: LanguageModelUsage | undefined): TokenUsage | null {
  if (!usage) return null;
  return { inputTokens: usage.inputTokens ?? null, outputTokens: usage.outputTokens ?? null };
}

/** Seconds like "34.4s" (Google's RetryInfo.retryDelay). */
function parseDelaySeconds(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^(\d+(?:\.\d+)?)s$/.exec(value.trim());
  return match ? Math.round(Number(match[1]) * 1000) : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseBody(body: string | undefined): unknown {
  if (!body) return undefined;
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/**
 * How long the provider asked us to wait, from whichever hint it sends: `retry-after-ms`
 * (OpenAI), `retry-after` in seconds or as an HTTP date (OpenAI, Anthropic, xAI), or Google's
 * `RetryInfo.retryDelay` in the error body.
 */
export function retryHintMs(
  headers: Record<string, string> | undefined,
  body: unknown,
  nowMs: number,
): number | undefined {
  const h = Object.fromEntries(Object.entries(headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  const ms = Number(h['retry-after-ms']);
  if (h['retry-after-ms'] !== undefined && Number.isFinite(ms) && ms >= 0) return Math.round(ms);
  const after = h['retry-after'];
  if (after !== undefined) {
    const seconds = Number(after);
    if (after.trim() !== '' && Number.isFinite(seconds)) return Math.max(0, Math.round(seconds * 1000));
    const date = Date.parse(after);
    if (!Number.isNaN(date)) return Math.max(0, date - nowMs);
  }
  const details = isRecord(body) && isRecord(body.error) ? body.error.details : undefined;
  if (Array.isArray(details)) {
    for (const detail of details) {
      if (isRecord(detail) && String(detail['@type']).endsWith('google.rpc.RetryInfo')) {
        return parseDelaySeconds(detail.retryDelay);
      }
    }
  }
  return undefined;
}

/**
 * The provider's own error code (`rate_limit_error`, `RESOURCE_EXHAUSTED`, `insufficient_quota`),
 * when it is a plain identifier. Never the provider's message: it can quote the key or the prompt.
 */
function providerCode(body: unknown): string | null {
  if (!isRecord(body)) return null;
  const error = isRecord(body.error) ? body.error : null;
  const candidates = [error?.status, error?.code, error?.type];
  for (const c of candidates) if (typeof c === 'string' && /^[A-Za-z_]{1,64}$/.test(c)) return c;
  return null;
}

/** Every failure of an SDK call as a ModelError whose message says what happened, never what was said. */
export function classifySdkError(err: unknown, signal: AbortSignal, clock: Clock): ModelError {
  if (err instanceof ModelError) return err;
  if (signal.aborted) return new ModelError('timeout', 'no answer before the call timed out');
  if (APICallError.isInstance(err)) {
    const status = err.statusCode;
    if (status === undefined) {
      return new ModelError('network', 'could not reach the provider', { retryable: true });
    }
    // A 2xx the SDK could not read: the body is not the provider's format.
    if (status >= 200 && status < 300) {
      return new ModelError('bad_response', 'the response is not in the provider’s format');
    }
    const body = parseBody(err.responseBody);
    const code = providerCode(body);
    const message = `HTTP ${status}${code ? ` (${code})` : ''}`;
    const retryAfterMs = retryHintMs(err.responseHeaders, body, clock.now().getTime());
    if (status === 429) return new ModelError('rate_limited', message, { retryable: true, retryAfterMs });
    const retryable = status >= 500 || status === 408 || status === 409;
    return new ModelError('http_error', message, { retryable, retryAfterMs });
  }
  if (NoObjectGeneratedError.isInstance(err)) {
    const usage = usageOf(err.usage);
    // xAI's Responses API says `incomplete` for an answer cut by the cap, which the SDK maps to `other`.
    const body = isRecord(err.response) ? (err.response as Record<string, unknown>).body : undefined;
    if (err.finishReason === 'length' || (isRecord(body) && body.status === 'incomplete')) {
      return new ModelError('truncated', 'the answer was cut off by the output-token cap', { usage });
    }
    return new ModelError('bad_response', 'the answer is not a JSON object', { usage });
  }
  if (JSONParseError.isInstance(err)) {
    return new ModelError('bad_response', 'the response is not JSON');
  }
  if (err instanceof Error && err.name.startsWith('AI_')) {
    // The response did not have the provider's shape, or carried no answer at all.
    return new ModelError('bad_response', 'the response is not in the provider’s format');
  }
  return new ModelError('network', 'the call failed', { retryable: true });
}

function addUsage(a: TokenUsage | null, b: LanguageModelUsage | undefined): TokenUsage | null {
  const next = usageOf(b);
  if (a === null) return next;
  if (next === null) return a;
  const sum = (x: number | null, y: number | null) => (x === null && y === null ? null : (x ?? 0) + (y ?? 0));
  return {
    inputTokens: sum(a.inputTokens, next.inputTokens),
    outputTokens: sum(a.outputTokens, next.outputTokens),
  };
}

/**
 * A model reached through the AI SDK (docs/ai.md#web-search): the answer schema as structured
 * output, the slot's output-token cap, no SDK retries (askModel retries within the deadline); the
 * provider's own web search where it has one and it is on, and Sibyl's function tools, called in a
 * loop of at most MAX_STEPS steps. Where the provider refuses search (or tools) beside a schema,
 * the model searches in a first call and answers from its own notes in a second: a source's text
 * is never sent back to any model.
 */
export function sdkModel(
  slot: ModelSlot,
  model: LanguageModel,
  deps: AdapterDeps,
  options: SdkModelOptions = {},
): ResolutionModel {
  const name = `${slot.name}/${slot.model}`;
  const searchMode = (prompt: ModelPrompt): SearchMode => {
    if (options.search === undefined) return 'unavailable';
    return slot.webSearch && prompt.webSearch !== false ? 'on' : 'off';
  };
  return {
    name,
    timeoutMs: slot.timeoutMs,
    searchMode,
    async ask(prompt: ModelPrompt, signal: AbortSignal): Promise<RawAnswer> {
      const search = options.search;
      const searching = search !== undefined && searchMode(prompt) === 'on';
      const functions = prompt.tools && Object.keys(prompt.tools).length > 0 ? prompt.tools : undefined;
      const searchTools = searching ? { [WEB_SEARCH]: search.tool(slot.maxSearches) as Tool } : undefined;
      const providerOptions = mergeOptions(
        options.providerOptions,
        searching ? search.providerOptions?.(slot.maxSearches) : undefined,
      );
      const { research, answer } = plan(functions, searchTools, options);
      const base = {
        model,
        system: prompt.system,
        temperature: 0,
        maxOutputTokens: slot.maxOutputTokens,
        maxRetries: 0,
        abortSignal: signal,
        // A step keeps its response (the pause and truncation checks read it), never the request
        // the SDK sent: held until the last step, it is memory every later step copies in GC.
        experimental_include: { requestBody: false },
        ...(providerOptions ? { providerOptions } : {}),
      };
      let usage: TokenUsage | null = null;
      try {
        const turns = await Promise.all(
          research.map((call) =>
            researchResumed(
              (messages, tools) =>
                generateText({ ...base, messages, tools, stopWhen: stepCountIs(MAX_STEPS) }),
              prompt.user,
              call.tools,
              searching ? search : undefined,
              slot.maxSearches,
            ),
          ),
        );
        const researched = turns.flatMap((turn) => turn.results);
        for (const result of researched) {
          usage = addUsage(usage, result.totalUsage);
          if (result.finishReason === 'content-filter') {
            throw new ModelError('refused', 'the provider refused to answer', { usage });
          }
        }
        if (turns.some((turn) => turn.paused)) {
          throw new ModelError('truncated', 'the provider paused its search turn past the search cap', {
            usage,
          });
        }
        const output = Output.object({
          schema: jsonSchema(prompt.schema),
          name: 'resolution',
          description: 'The outcome that happened, how sure the model is, and why',
        });
        const result = await generateText({
          ...base,
          ...(researched.length === 0
            ? { prompt: prompt.user }
            : {
                messages: [
                  { role: 'user' as const, content: prompt.user },
                  {
                    role: 'assistant' as const,
                    content: turns.map((t) => notesOf(t.results.flatMap((r) => r.steps))).join('\n\n'),
                  },
                  { role: 'user' as const, content: ANSWER_NOW },
                ],
              }),
          ...(answer.tools ? { tools: answer.tools, stopWhen: stepCountIs(MAX_STEPS) } : {}),
          output,
        });
        usage = addUsage(usage, result.totalUsage);
        if (result.rawFinishReason === PAUSE_TURN) {
          throw new ModelError('truncated', 'the provider paused the turn before it answered', { usage });
        }
        // xAI's Responses API says `incomplete` for an answer cut by the cap, which the SDK maps to `other`.
        if (result.finishReason === 'length' || result.rawFinishReason === 'incomplete') {
          throw new ModelError('truncated', 'the answer was cut off by the output-token cap', { usage });
        }
        if (result.finishReason === 'content-filter') {
          throw new ModelError('refused', 'the provider refused to answer', { usage });
        }
        let value: unknown;
        try {
          value = result.output;
        } catch {
          throw new ModelError('bad_response', 'the response carries no answer', { usage });
        }
        if (value === undefined)
          throw new ModelError('bad_response', 'the response carries no answer', { usage });
        const steps = [...researched.flatMap((r) => r.steps), ...result.steps];
        let searches: number | null = search === undefined ? null : 0;
        if (searching) for (const step of steps) searches = addCount(searches, search.count(step));
        return {
          value,
          finishReason: result.finishReason,
          usage,
          evidence: evidenceOfSteps(steps, searching ? search : undefined),
          searches,
        };
      } catch (err) {
        throw classifySdkError(err, signal, deps.clock);
      }
    },
  };
}
