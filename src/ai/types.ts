import type { ToolSet } from 'ai';
import type { AbstainReason, Evidence } from './evidence.js';

/**
 * The vocabulary of AI resolution (docs/ai.md): the provider kinds a model slot can use, what a
 * model is asked, what it answers, and how an answer that is not a vote is classified.
 */

/** Every provider a model slot can use; the registry must wire each (providers/registry.ts). */
export const PROVIDER_KINDS = ['openai', 'anthropic', 'google', 'xai', 'openai-compatible'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/** The four positions of a resolution: slot 1 is position 0. */
export const MODEL_COUNT = 4;

/** The question as the models receive it: data, never instructions. */
export interface ResolutionQuestion {
  question: string;
  outcomes: readonly string[];
  /**
   * Null when none was given, which is not the same as `""` (docs/attestations.md#the-message):
   * the models read both as no context.
   */
  context: string | null;
}

/** What one model is sent: the same for all four (prompt.ts). */
export interface ModelPrompt {
  system: string;
  /** The user message: the data block between its delimiters, and the answer instructions. */
  user: string;
  /** The JSON schema the answer must follow. */
  schema: Record<string, unknown>;
  /** The question itself, for the sandbox models, which read their directives from the context. */
  data: ResolutionQuestion;
  /**
   * Sibyl's own tools this call may use (`sibyl_price`, `sibyl_market`: docs/ai.md#sibyls-tools),
   * AI SDK tool definitions whose `execute` answers the call; absent when the process has none.
   * A fresh set per model call: it counts the call's tool calls (AI_MAX_TOOL_CALLS).
   */
  tools?: ToolSet;
  /**
   * Whether the provider's own web search may be used on this call: false turns it off (`sibyl ai
   * evaluate --search off`); undefined leaves the slot's setting (AI_WEB_SEARCH, AI_<SLOT>_WEB_SEARCH).
   */
  webSearch?: boolean;
}

/**
 * Whether a model call was offered its provider's web search (docs/ai.md#web-search): `on`; `off`,
 * turned off by AI_WEB_SEARCH, the slot's AI_MODEL_n_WEB_SEARCH or the call (`sibyl ai evaluate
 * --search off`); `unavailable`, the slot's provider has none (a plain OpenAI-compatible endpoint),
 * whatever the settings say.
 */
export const SEARCH_MODES = ['on', 'off', 'unavailable'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

export interface TokenUsage {
  inputTokens: number | null;
  outputTokens: number | null;
}

/** A model's raw answer, before the schema check. */
export interface RawAnswer {
  /** The JSON value the model produced (already parsed), or the text it produced instead. */
  value: unknown;
  /** `length` means the answer was cut by the output-token cap. */
  finishReason: string;
  usage: TokenUsage | null;
  /** What the model looked at, as the provider reported it: unchecked (evidence.ts checks it). */
  evidence?: readonly unknown[];
  /** Web searches the provider reports for the call; null or absent when it does not say. */
  searches?: number | null;
}

/** A model of a resolution: one of the four configured providers, or a sandbox model. */
export interface ResolutionModel {
  /** `<provider>/<model>`, as shown in `modelsUsed`. */
  readonly name: string;
  /** Longest wait for one call; the resolution's deadline may cut it shorter. */
  readonly timeoutMs: number;
  /** Throws ModelError on every failure; `signal` aborts at the call's timeout or the deadline. */
  ask(prompt: ModelPrompt, signal: AbortSignal): Promise<RawAnswer>;
  /** Whether a call with this prompt is offered web search; a model without it has none (`unavailable`). */
  searchMode?(prompt: ModelPrompt): SearchMode;
}

/** Why a model gave no valid answer; each counts as that model failing, never as a vote. */
export const FAILURE_KINDS = [
  'timeout',
  'network',
  'rate_limited',
  'http_error',
  'bad_response',
  'truncated',
  'invalid_answer',
  'refused',
  'not_configured',
  'abandoned',
] as const;
export type ModelFailure = (typeof FAILURE_KINDS)[number];

export interface ModelErrorDetails {
  /** Whether asking again may succeed (rate limits, overloads, network errors). */
  retryable?: boolean;
  /** How long the provider asked us to wait before asking again. */
  retryAfterMs?: number | undefined;
  /** Tokens the failed call still used, when the provider said. */
  usage?: TokenUsage | null;
}

/** Why a model gave no valid answer. Its message is shown on the record: it never quotes a provider. */
export class ModelError extends Error {
  override name = 'ModelError';
  constructor(
    readonly kind: ModelFailure,
    message: string,
    readonly details: ModelErrorDetails = {},
  ) {
    super(message);
  }
}

/** One model's part in a resolution, as stored and shown on the record (`votes`). */
export interface Vote {
  /** Slot position, 0 to 3. */
  position: number;
  /** `<provider>/<model>`. */
  model: string;
  /** The outcome it chose; null when it could not determine one, or failed. */
  outcomeIndex: number | null;
  confidence: number | null;
  reasoning: string | null;
  latencyMs: number;
  /** Why this model gave no valid answer; null when it did (a vote or "cannot determine"). */
  error: { kind: ModelFailure; message: string } | null;
  usage: TokenUsage | null;
  /** What the model looked at, checked and capped (docs/ai.md#evidence); empty when none. */
  evidence: Evidence[];
  /** Web searches the provider reports for the call; null when it does not say. */
  searches: number | null;
  /** Why a valid answer is "cannot determine"; null on a vote for an outcome and on a failure. */
  abstainReason: AbstainReason | null;
  /**
   * Whether the call was offered web search, failed or not; null on an abandoned model's vote and on
   * the votes stored before this field.
   */
  search: SearchMode | null;
}

/** A valid answer: a vote for an outcome, or a null "cannot determine". */
export function isValidAnswer(vote: Vote): boolean {
  return vote.error === null;
}
