import type { ProviderKind } from '../../src/ai/types.js';
import {
  type FakeRequest,
  type FakeResponse,
  type FakeServer,
  startFakeServer,
} from '../helpers/fake-server.js';

/**
 * Local HTTP servers that answer exactly as each LLM provider does (wire formats of OpenAI's
 * and xAI's Responses APIs, Anthropic's Messages API, Gemini's generateContent and OpenAI-style chat
 * completions for OpenAI-compatible endpoints), driven by provider-neutral replies.
 */

export type FakeReply =
  /** A JSON answer (any value: the service must schema-check it). */
  | { answer: unknown; usage?: { input: number; output: number } }
  /** Prose instead of JSON. */
  | { prose: string }
  /** The model hit its output-token cap mid-answer. */
  | { truncated: string }
  /** The provider's own error response. */
  | { error: number; headers?: Record<string, string>; retryDelay?: string; message?: string }
  /** A 200 whose body is not the provider's format at all. */
  | { garbage: string }
  /** Never answers within the test (the call must time out). */
  | { hangMs: number };

export interface AskedPrompt {
  system: string;
  user: string;
  /** The structured-output schema the provider was sent, wherever its format puts it. */
  schema: unknown;
  body: Record<string, unknown>;
}

export interface FakeLlm {
  kind: ProviderKind;
  server: FakeServer;
  /** The base URL to configure (AI_MODEL_n_BASE_URL). */
  baseUrl: string;
  /** What each call asked, in order. */
  asked(): AskedPrompt[];
  /** Swaps the behaviour; `call` counts from 1 again. */
  setReply(reply: (request: FakeRequest, call: number) => FakeReply | Promise<FakeReply>): void;
  close(): Promise<void>;
}

const ERROR_TYPES: Record<number, { openai: string; anthropic: string; google: string }> = {
  400: { openai: 'invalid_request_error', anthropic: 'invalid_request_error', google: 'INVALID_ARGUMENT' },
  401: { openai: 'invalid_request_error', anthropic: 'authentication_error', google: 'UNAUTHENTICATED' },
  403: { openai: 'invalid_request_error', anthropic: 'permission_error', google: 'PERMISSION_DENIED' },
  404: { openai: 'invalid_request_error', anthropic: 'not_found_error', google: 'NOT_FOUND' },
  429: { openai: 'rate_limit_exceeded', anthropic: 'rate_limit_error', google: 'RESOURCE_EXHAUSTED' },
  500: { openai: 'server_error', anthropic: 'api_error', google: 'INTERNAL' },
  503: { openai: 'server_error', anthropic: 'overloaded_error', google: 'UNAVAILABLE' },
  529: { openai: 'server_error', anthropic: 'overloaded_error', google: 'UNAVAILABLE' },
};

function usageOf(reply: { usage?: { input: number; output: number } }) {
  return reply.usage ?? { input: 371, output: 29 };
}

function textOf(reply: FakeReply): string {
  if ('answer' in reply) return JSON.stringify(reply.answer);
  if ('prose' in reply) return reply.prose;
  if ('truncated' in reply) return reply.truncated;
  return '';
}

function errorBody(kind: ProviderKind, status: number, message: string, retryDelay?: string): unknown {
  const types = ERROR_TYPES[status] ?? ERROR_TYPES[500];
  if (!types) throw new Error('no error types');
  if (kind === 'anthropic') {
    return { type: 'error', error: { type: types.anthropic, message }, request_id: 'req_011CW5n1' };
  }
  if (kind === 'google') {
    return {
      error: {
        code: status,
        message,
        status: types.google,
        ...(retryDelay
          ? {
              details: [
                {
                  '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
                  violations: [{ quotaId: 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier' }],
                },
                { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay },
              ],
            }
          : {}),
      },
    };
  }
  // xAI's Responses API: a flat envelope.
  if (kind === 'xai') return { code: 'Client specified an invalid argument', error: message };
  return {
    error: { message, type: types.openai, param: null, code: status === 429 ? 'rate_limit_exceeded' : null },
  };
}

/** The provider's success body for a reply, in its own wire format. */
function successBody(kind: ProviderKind, reply: FakeReply, request: Record<string, unknown>): unknown {
  const text = textOf(reply);
  const cut = 'truncated' in reply;
  const usage = usageOf(reply as { usage?: { input: number; output: number } });
  if (kind === 'openai' || kind === 'xai') {
    return {
      id: 'resp_0465b6d1ae1f97c500699f88318ee481a3b627f7fcb4875152',
      object: 'response',
      created_at: 1772062769,
      status: cut ? 'incomplete' : 'completed',
      ...(cut ? { incomplete_details: { reason: 'max_output_tokens' } } : {}),
      model: kind === 'xai' ? 'grok-4' : 'gpt-4.1-mini-2025-04-14',
      service_tier: 'default',
      output: [
        {
          id: 'msg_0465b6d1ae1f97c500699f8831c4',
          type: 'message',
          status: cut ? 'incomplete' : 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', annotations: [], logprobs: [], text }],
        },
      ],
      usage: {
        input_tokens: usage.input,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: usage.output,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: usage.input + usage.output,
      },
    };
  }
  if (kind === 'anthropic') {
    // A forced `json` tool (older models) is answered with a tool_use block, else a text block.
    const tools = request.tools as { name: string }[] | undefined;
    const viaTool = Array.isArray(tools) && tools.some((t) => t.name === 'json') && 'answer' in reply;
    return {
      model: 'claude-sonnet-4-5-20250929',
      id: 'msg_015rVfxqGkwrrRARo3Uv3C9K',
      type: 'message',
      role: 'assistant',
      content: viaTool
        ? [{ type: 'tool_use', id: 'toolu_01Q9ExVZnzZj7E2QQYHYtNUa', name: 'json', input: reply.answer }]
        : [{ type: 'text', text }],
      stop_reason: cut ? 'max_tokens' : viaTool ? 'tool_use' : 'end_turn',
      stop_sequence: null,
      usage: {
        input_tokens: usage.input,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
        output_tokens: usage.output,
        service_tier: 'standard',
      },
    };
  }
  if (kind === 'google') {
    return {
      candidates: [
        {
          content: { parts: [{ text }], role: 'model' },
          finishReason: cut ? 'MAX_TOKENS' : 'STOP',
          index: 0,
        },
      ],
      usageMetadata: {
        promptTokenCount: usage.input,
        candidatesTokenCount: usage.output,
        totalTokenCount: usage.input + usage.output,
        promptTokensDetails: [{ modality: 'TEXT', tokenCount: usage.input }],
      },
      modelVersion: 'gemini-2.5-flash',
      responseId: 'Un6LacrVMcjUxs0PmJfWoQc',
    };
  }
  return {
    id: 'chatcmpl-D8Z5f52zQqikDBEKQMQoYcWMcWPeU',
    object: 'chat.completion',
    created: 1770933883,
    model: 'mistral-large-latest',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: text, refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: cut ? 'length' : 'stop',
      },
    ],
    usage: {
      prompt_tokens: usage.input,
      completion_tokens: usage.output,
      total_tokens: usage.input + usage.output,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
    },
    system_fingerprint: 'fp_de604bd877',
  };
}

function render(kind: ProviderKind, reply: FakeReply, request: Record<string, unknown>): FakeResponse {
  if ('hangMs' in reply) return { delayMs: reply.hangMs, body: successBody(kind, { prose: '' }, request) };
  if ('garbage' in reply) return { body: reply.garbage };
  if ('error' in reply) {
    const message = reply.message ?? `error ${reply.error}`;
    return {
      status: reply.error,
      headers: { ...(reply.headers ?? {}), 'x-request-id': 'req_fake' },
      body: errorBody(kind, reply.error, message, reply.retryDelay),
    };
  }
  return { body: successBody(kind, reply, request) };
}

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(text).join('');
  if (value && typeof value === 'object') {
    const v = value as Record<string, unknown>;
    if (typeof v.text === 'string') return v.text;
    if (v.content !== undefined) return text(v.content);
    if (Array.isArray(v.parts)) return text(v.parts);
  }
  return '';
}

/** The system and user text of a request, wherever the provider's format puts them. */
export function askedPrompt(kind: ProviderKind, body: Record<string, unknown>): AskedPrompt {
  if (kind === 'openai' || kind === 'xai') {
    const input = body.input as { role: string; content: unknown }[];
    const format = (body.text as { format?: { schema?: unknown } } | undefined)?.format;
    return {
      system: text(input.filter((m) => m.role === 'system' || m.role === 'developer')),
      user: text(input.filter((m) => m.role === 'user')),
      schema: format?.schema,
      body,
    };
  }
  if (kind === 'anthropic') {
    const format = (body.output_config as { format?: { schema?: unknown } } | undefined)?.format;
    const tool = (body.tools as { name: string; input_schema: unknown }[] | undefined)?.find(
      (t) => t.name === 'json',
    );
    return {
      system: text(body.system),
      user: text(body.messages),
      schema: format?.schema ?? tool?.input_schema,
      body,
    };
  }
  if (kind === 'google') {
    const config = body.generationConfig as { responseSchema?: unknown } | undefined;
    return {
      system: text(body.systemInstruction),
      user: text(body.contents),
      schema: config?.responseSchema,
      body,
    };
  }
  const messages = body.messages as { role: string; content: unknown }[];
  const format = body.response_format as { json_schema?: { schema?: unknown } } | undefined;
  return {
    system: text(messages.filter((m) => m.role === 'system')),
    user: text(messages.filter((m) => m.role === 'user')),
    schema: format?.json_schema?.schema,
    body,
  };
}

const BASE_PATH: Record<ProviderKind, string> = {
  openai: '/v1',
  anthropic: '/v1',
  google: '/v1beta',
  xai: '/v1',
  'openai-compatible': '/v1',
};

export async function startFakeLlm(
  kind: ProviderKind,
  reply: (request: FakeRequest, call: number) => FakeReply | Promise<FakeReply> = () => ({
    answer: { outcomeIndex: 0, confidence: 0.9, reasoning: 'It happened.' },
  }),
): Promise<FakeLlm> {
  let current = reply;
  let calls = 0;
  const server = await startFakeServer(async (request) => {
    calls += 1;
    const body = request.body ? (JSON.parse(request.body) as Record<string, unknown>) : {};
    return render(kind, await current(request, calls), body);
  });
  return {
    kind,
    server,
    baseUrl: `${server.url}${BASE_PATH[kind]}`,
    asked: () => server.requests.map((r) => askedPrompt(kind, JSON.parse(r.body) as Record<string, unknown>)),
    setReply(next) {
      current = next;
      calls = 0;
    },
    close: () => server.close(),
  };
}

/** The configuration of four slots pointing at these fakes, slot n at fakes[n - 1]. */
export function fakeSlotsEnv(
  fakes: readonly FakeLlm[],
  extra: Record<string, string> = {},
): Record<string, string> {
  // These fakes answer every call with the reply of the test: the plain answer path, one call a
  // model. Web search and the tool loop: test/ai/search-*.test.ts.
  const env: Record<string, string> = { AI_WEB_SEARCH: 'off' };
  fakes.forEach((fake, i) => {
    const n = i + 1;
    env[`AI_MODEL_${n}_PROVIDER`] = fake.kind;
    env[`AI_MODEL_${n}_BASE_URL`] = fake.baseUrl;
    env[`AI_MODEL_${n}_API_KEY`] = `sk-test-secret-key-${n}`;
    if (fake.kind === 'openai-compatible') env[`AI_MODEL_${n}_NAME`] = 'mistral';
    if (fake.kind === 'openai-compatible') env[`AI_MODEL_${n}_ID`] = 'mistral-large-latest';
  });
  return { ...env, ...extra };
}
