import type { generateText, StepResult, ToolSet } from 'ai';

/**
 * What a model's web search and tool calls give a vote (docs/ai.md#web-search): which provider
 * features share one call, how the calls of one question are planned, and the evidence and
 * notes read from the SDK's steps.
 */

export type ProviderOptions = Parameters<typeof generateText>[0]['providerOptions'];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One step of a `generateText` call, as the SDK reports it. */
export type Step = StepResult<ToolSet>;

/**
 * A provider's own web search as one adapter offers it (docs/ai.md#web-search), and what the AI SDK
 * lets it be combined with in one call: where it cannot, the model searches first and answers in
 * a second call.
 */
export interface NativeSearch {
  /**
   * The provider tool, capped at `maxSearches` where the provider takes a cap. Typed loosely: each
   * provider package types it with its own copy of the SDK's utilities, which `ai`'s Tool type does
   * not accept although the object is the same at run time.
   */
  tool(maxSearches: number): object;
  /** Provider options the call needs when searching (OpenAI's `max_tool_calls`). */
  providerOptions?(maxSearches: number): ProviderOptions;
  /** Search and the answer schema in one call. */
  withOutput: boolean;
  /** Search and Sibyl's function tools in one call. */
  withFunctions: boolean;
  /** The searches the provider reports for one step; null when it does not say. */
  count(step: Step): number | null;
  /**
   * Whether a source the SDK reports is a citation of the answer (kept as evidence) rather than a
   * search result the model was shown and did not cite. All are citations unless said otherwise.
   */
  cited?(source: Extract<Step['content'][number], { type: 'source' }>): boolean;
  /** The cited text of a source, where the provider gives one. */
  quote?(source: Extract<Step['content'][number], { type: 'source' }>): string | null;
}

export interface SdkModelOptions {
  providerOptions?: ProviderOptions;
  /** The provider's own web search; undefined where it has none (votes then say `searches: null`). */
  search?: NativeSearch | undefined;
  /** Sibyl's function tools and the answer schema in one call; true unless the provider refuses. */
  functionsWithOutput?: boolean;
}

/** Model steps of one call: a tool call and its answer take two; more are allowed for a few tools. */
export const MAX_STEPS = 6;

/** The tool name the provider's web search goes by in every call. */
export const WEB_SEARCH = 'web_search';

/** The second call of a search-then-answer resolution: the model's own notes, then the question again. */
export const ANSWER_NOW =
  'Now answer the resolution request above with the JSON object only, as the instructions say.';

function isRecordOrNull(value: unknown): Record<string, unknown> | null {
  return isRecord(value) ? value : null;
}

/** Sums two provider counts; null as soon as one is unknown. */
export function addCount(a: number | null, b: number | null): number | null {
  return a === null || b === null ? null : a + b;
}

/**
 * What a model looked at in the order it used it, unchecked (evidence.ts checks it): every call of
 * one of Sibyl's tools with its result, and the web sources its answer cites (one item a URL; a
 * later citation of a URL adds its quote when the first had none). The URLs a search opened but
 * the answer does not cite follow the citations.
 */
export function evidenceOfSteps(steps: readonly Step[], search: NativeSearch | undefined): unknown[] {
  const items: Record<string, unknown>[] = [];
  const webByUrl = new Map<string, Record<string, unknown>>();
  const opened: string[] = [];
  for (const step of steps) {
    for (const part of step.content) {
      if (part.type === 'tool-result' && !part.providerExecuted) {
        items.push({ kind: 'sibyl', tool: part.toolName, input: part.input, output: part.output });
      } else if (part.type === 'tool-error' && !part.providerExecuted) {
        items.push({
          kind: 'sibyl',
          tool: part.toolName,
          input: part.input,
          output: { error: 'the tool failed' },
        });
      } else if (part.type === 'source' && part.sourceType === 'url') {
        // A search result the answer does not cite (Anthropic lists every one): not kept.
        if (search?.cited && !search.cited(part)) continue;
        const quote = search?.quote?.(part) ?? null;
        const seen = webByUrl.get(part.url);
        if (seen) {
          if (seen.quote === null && quote !== null) seen.quote = quote;
          continue;
        }
        const item = { kind: 'web', url: part.url, title: part.title ?? '', quote };
        webByUrl.set(part.url, item);
        items.push(item);
      } else if (part.type === 'tool-result' && part.providerExecuted && part.toolName === WEB_SEARCH) {
        // OpenAI's `action.sources`: the pages a search returned (with a schema, citations may be missing).
        const sources = isRecordOrNull(part.output)?.sources;
        if (Array.isArray(sources)) {
          for (const source of sources) {
            const url = isRecordOrNull(source)?.url;
            if (typeof url === 'string') opened.push(url);
          }
        }
      }
    }
  }
  for (const url of opened) {
    if (webByUrl.has(url)) continue;
    const item = { kind: 'web', url, title: '', quote: null };
    webByUrl.set(url, item);
    items.push(item);
  }
  return items;
}

/** The model's own words in a research call, for the answer call: never a source's text. */
export function notesOf(steps: readonly Step[]): string {
  const text = steps
    .flatMap((step) => step.content.filter((part) => part.type === 'text').map((part) => part.text))
    .join('')
    .trim();
  return text === '' ? '(no notes)' : text;
}

export interface Call {
  tools: ToolSet | undefined;
  output: boolean;
}

/**
 * How one question is asked: one call with every tool and the answer schema where the provider
 * allows them together, else research calls (run at once) whose notes a last call answers from.
 */
export function plan(
  functions: ToolSet | undefined,
  searchTools: ToolSet | undefined,
  options: SdkModelOptions,
) {
  const search = options.search;
  const functionsWithOutput = options.functionsWithOutput ?? true;
  const together =
    (!searchTools || (search?.withOutput && (!functions || search.withFunctions))) &&
    (!functions || functionsWithOutput);
  if (together) {
    const tools = functions || searchTools ? { ...searchTools, ...functions } : undefined;
    return { research: [] as Call[], answer: { tools, output: true } };
  }
  const research: Call[] = [];
  if (searchTools && functions && search?.withFunctions) {
    research.push({ tools: { ...searchTools, ...functions }, output: false });
  } else {
    if (searchTools) research.push({ tools: searchTools, output: false });
    if (functions) research.push({ tools: functions, output: false });
  }
  return { research, answer: { tools: undefined, output: true } as Call };
}

export function mergeOptions(a: ProviderOptions, b: ProviderOptions): ProviderOptions {
  if (!a) return b;
  if (!b) return a;
  const out: Record<string, Record<string, unknown>> = { ...a } as Record<string, Record<string, unknown>>;
  for (const [provider, values] of Object.entries(b)) out[provider] = { ...out[provider], ...values };
  return out as ProviderOptions;
}
