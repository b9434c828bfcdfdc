import Type from 'typebox';
import { ConfigError, defineSettings } from '../lib/settings.js';
import { PROVIDER_KINDS, type ProviderKind } from './types.js';

const Provider = (fallback: ProviderKind) => Type.Enum(PROVIDER_KINDS, { default: fallback });
const OptionalText = Type.Optional(Type.String({ minLength: 1 }));
const OptionalMs = Type.Optional(Type.Integer({ minimum: 100 }));
const OptionalTokens = Type.Optional(Type.Integer({ minimum: 16, maximum: 100_000 }));
/**
 * The model a slot uses when AI_MODEL_n_ID is unset. An OpenAI-compatible endpoint has no default:
 * what it serves is the operator's choice.
 */
export const DEFAULT_MODELS: Record<ProviderKind, string> = {
  openai: 'gpt-4.1-mini',
  anthropic: 'claude-sonnet-4-5',
  google: 'gemini-2.5-flash',
  xai: 'grok-4',
  'openai-compatible': '',
};

const ResponseFormat = Type.Enum(['json_schema', 'json_object'], { default: 'json_schema' });
/** A slot's own web-search switch; unset: AI_WEB_SEARCH decides. */
const OptionalSwitch = Type.Optional(Type.Enum(['on', 'off']));

/**
 * AI resolution (docs/ai.md#configuration): four model slots, each any provider kind, and how a
 * resolution runs (deadline, lease, retries, worker concurrency).
 */
export const aiSettings = defineSettings(
  {
    AI_MODEL_1_PROVIDER: Provider('openai'),
    AI_MODEL_1_ID: OptionalText,
    AI_MODEL_1_NAME: OptionalText,
    AI_MODEL_1_API_KEY: OptionalText,
    AI_MODEL_1_BASE_URL: OptionalText,
    AI_MODEL_1_TIMEOUT_MS: OptionalMs,
    AI_MODEL_1_MAX_OUTPUT_TOKENS: OptionalTokens,
    AI_MODEL_1_RESPONSE_FORMAT: ResponseFormat,
    AI_MODEL_1_WEB_SEARCH: OptionalSwitch,
    AI_MODEL_2_PROVIDER: Provider('anthropic'),
    AI_MODEL_2_ID: OptionalText,
    AI_MODEL_2_NAME: OptionalText,
    AI_MODEL_2_API_KEY: OptionalText,
    AI_MODEL_2_BASE_URL: OptionalText,
    AI_MODEL_2_TIMEOUT_MS: OptionalMs,
    AI_MODEL_2_MAX_OUTPUT_TOKENS: OptionalTokens,
    AI_MODEL_2_RESPONSE_FORMAT: ResponseFormat,
    AI_MODEL_2_WEB_SEARCH: OptionalSwitch,
    AI_MODEL_3_PROVIDER: Provider('google'),
    AI_MODEL_3_ID: OptionalText,
    AI_MODEL_3_NAME: OptionalText,
    AI_MODEL_3_API_KEY: OptionalText,
    AI_MODEL_3_BASE_URL: OptionalText,
    AI_MODEL_3_TIMEOUT_MS: OptionalMs,
    AI_MODEL_3_MAX_OUTPUT_TOKENS: OptionalTokens,
    AI_MODEL_3_RESPONSE_FORMAT: ResponseFormat,
    AI_MODEL_3_WEB_SEARCH: OptionalSwitch,
    AI_MODEL_4_PROVIDER: Provider('xai'),
    AI_MODEL_4_ID: OptionalText,
    AI_MODEL_4_NAME: OptionalText,
    AI_MODEL_4_API_KEY: OptionalText,
    AI_MODEL_4_BASE_URL: OptionalText,
    AI_MODEL_4_TIMEOUT_MS: OptionalMs,
    AI_MODEL_4_MAX_OUTPUT_TOKENS: OptionalTokens,
    AI_MODEL_4_RESPONSE_FORMAT: ResponseFormat,
    AI_MODEL_4_WEB_SEARCH: OptionalSwitch,
    AI_TIMEOUT_MS: Type.Integer({ default: 30_000, minimum: 100 }),
    AI_MAX_OUTPUT_TOKENS: Type.Integer({ default: 1024, minimum: 16, maximum: 100_000 }),
    AI_DEADLINE_MS: Type.Integer({ default: 60_000, minimum: 500 }),
    AI_RETRIES: Type.Integer({ default: 1, minimum: 0, maximum: 5 }),
    AI_LEASE_MS: Type.Integer({ default: 120_000, minimum: 1000 }),
    AI_MAX_ATTEMPTS: Type.Integer({ default: 5, minimum: 1, maximum: 100 }),
    AI_WORKER_CONCURRENCY: Type.Integer({ default: 100, minimum: 1, maximum: 2000 }),
    AI_SUBMIT_CONCURRENCY: Type.Integer({ default: 4, minimum: 1, maximum: 500 }),
    AI_WEB_SEARCH: Type.Enum(['on', 'off'], { default: 'on' }),
    AI_MAX_SEARCHES: Type.Integer({ default: 3, minimum: 1, maximum: 20 }),
    AI_MAX_TOOL_CALLS: Type.Integer({ default: 3, minimum: 0, maximum: 20 }),
  },
  (v) => {
    const slot = (
      position: number,
      s: {
        provider: ProviderKind;
        id: string | undefined;
        name: string | undefined;
        apiKey: string | undefined;
        baseUrl: string | undefined;
        timeoutMs: number | undefined;
        maxOutputTokens: number | undefined;
        responseFormat: 'json_schema' | 'json_object';
        webSearch: 'on' | 'off' | undefined;
      },
    ): ModelSlot => ({
      slot: position,
      provider: s.provider,
      name: s.name ?? s.provider,
      model: s.id ?? DEFAULT_MODELS[s.provider],
      apiKey: s.apiKey,
      baseUrl: s.baseUrl?.replace(/\/+$/, ''),
      timeoutMs: s.timeoutMs ?? v.AI_TIMEOUT_MS,
      maxOutputTokens: s.maxOutputTokens ?? v.AI_MAX_OUTPUT_TOKENS,
      responseFormat: s.responseFormat,
      webSearch: (s.webSearch ?? v.AI_WEB_SEARCH) === 'on',
      maxSearches: v.AI_MAX_SEARCHES,
    });
    // A resolution's lease must outlast its provider deadline, or a slow resolution would be taken
    // from its worker and asked again while it still runs.
    if (v.AI_LEASE_MS < v.AI_DEADLINE_MS + 1000) {
      throw new ConfigError(
        `Invalid configuration: AI_LEASE_MS (${v.AI_LEASE_MS}) must be at least AI_DEADLINE_MS + 1000 (${v.AI_DEADLINE_MS + 1000})`,
      );
    }
    return {
      slots: [
        slot(1, {
          provider: v.AI_MODEL_1_PROVIDER,
          id: v.AI_MODEL_1_ID,
          name: v.AI_MODEL_1_NAME,
          apiKey: v.AI_MODEL_1_API_KEY,
          baseUrl: v.AI_MODEL_1_BASE_URL,
          timeoutMs: v.AI_MODEL_1_TIMEOUT_MS,
          maxOutputTokens: v.AI_MODEL_1_MAX_OUTPUT_TOKENS,
          responseFormat: v.AI_MODEL_1_RESPONSE_FORMAT,
          webSearch: v.AI_MODEL_1_WEB_SEARCH,
        }),
        slot(2, {
          provider: v.AI_MODEL_2_PROVIDER,
          id: v.AI_MODEL_2_ID,
          name: v.AI_MODEL_2_NAME,
          apiKey: v.AI_MODEL_2_API_KEY,
          baseUrl: v.AI_MODEL_2_BASE_URL,
          timeoutMs: v.AI_MODEL_2_TIMEOUT_MS,
          maxOutputTokens: v.AI_MODEL_2_MAX_OUTPUT_TOKENS,
          responseFormat: v.AI_MODEL_2_RESPONSE_FORMAT,
          webSearch: v.AI_MODEL_2_WEB_SEARCH,
        }),
        slot(3, {
          provider: v.AI_MODEL_3_PROVIDER,
          id: v.AI_MODEL_3_ID,
          name: v.AI_MODEL_3_NAME,
          apiKey: v.AI_MODEL_3_API_KEY,
          baseUrl: v.AI_MODEL_3_BASE_URL,
          timeoutMs: v.AI_MODEL_3_TIMEOUT_MS,
          maxOutputTokens: v.AI_MODEL_3_MAX_OUTPUT_TOKENS,
          responseFormat: v.AI_MODEL_3_RESPONSE_FORMAT,
          webSearch: v.AI_MODEL_3_WEB_SEARCH,
        }),
        slot(4, {
          provider: v.AI_MODEL_4_PROVIDER,
          id: v.AI_MODEL_4_ID,
          name: v.AI_MODEL_4_NAME,
          apiKey: v.AI_MODEL_4_API_KEY,
          baseUrl: v.AI_MODEL_4_BASE_URL,
          timeoutMs: v.AI_MODEL_4_TIMEOUT_MS,
          maxOutputTokens: v.AI_MODEL_4_MAX_OUTPUT_TOKENS,
          responseFormat: v.AI_MODEL_4_RESPONSE_FORMAT,
          webSearch: v.AI_MODEL_4_WEB_SEARCH,
        }),
      ],
      deadlineMs: v.AI_DEADLINE_MS,
      retries: v.AI_RETRIES,
      leaseMs: v.AI_LEASE_MS,
      maxAttempts: v.AI_MAX_ATTEMPTS,
      concurrency: v.AI_WORKER_CONCURRENCY,
      /** Submit transactions one API process runs at once (the rest wait in memory, not on the pool). */
      submitConcurrency: v.AI_SUBMIT_CONCURRENCY,
      /** Calls of Sibyl's tools answered per model call (docs/ai.md#sibyls-tools); 0: no tools offered. */
      maxToolCalls: v.AI_MAX_TOOL_CALLS,
    };
  },
);

/** One configured model slot. */
export interface ModelSlot {
  /** 1 to 4. */
  slot: number;
  provider: ProviderKind;
  /** The provider part of `<provider>/<model>` in `modelsUsed` (AI_MODEL_n_NAME, else the kind). */
  name: string;
  /** Empty when an OpenAI-compatible slot names none (it is then not configured). */
  model: string;
  apiKey: string | undefined;
  /** Without a trailing slash; undefined: the provider's own. */
  baseUrl: string | undefined;
  timeoutMs: number;
  maxOutputTokens: number;
  /** OpenAI-compatible endpoints only: `json_object` for those without JSON-schema support (DeepSeek). */
  responseFormat: 'json_schema' | 'json_object';
  /**
   * Whether the model may search the web with its provider's own search (AI_MODEL_n_WEB_SEARCH,
   * else AI_WEB_SEARCH; docs/ai.md#web-search). A provider without one answers without it.
   */
  webSearch: boolean;
  /** The most web searches one model call may make (AI_MAX_SEARCHES), where the provider takes a cap. */
  maxSearches: number;
}

export type AiConfig = ReturnType<typeof aiSettings.parse>;
