import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { askModel } from '../../src/ai/ask.js';
import { buildPrompt } from '../../src/ai/prompt.js';
import { createLiveModels } from '../../src/ai/providers/registry.js';
import { PROVIDER_KINDS, type ProviderKind, type ResolutionModel, type Vote } from '../../src/ai/types.js';
import { ManualClock } from '../../src/lib/clock.js';
import { testConfig } from '../helpers/context.js';
import { type FakeLlm, type FakeReply, startFakeLlm } from './fake-llm.js';

/**
 * Each provider adapter against a local server that answers exactly as that provider does: a valid
 * answer is a vote; anything else (HTTP errors, rate limits beyond the deadline, timeouts, prose,
 * an index out of range, a truncated answer, a body in the wrong format) is that model failing.
 */

const KEY = 'sk-test-secret-key-1';
const prompt = buildPrompt(
  {
    question: 'Did the Artemis II crew splash down before 2026-05-01?',
    outcomes: ['Yes', 'No'],
    context: '',
  },
  new Date('2026-12-07T12:00:00Z'),
);

/** How each provider says "wait this long" on a 429. */
function rateLimited(kind: ProviderKind, waitMs: number): FakeReply {
  if (kind === 'google') return { error: 429, retryDelay: `${waitMs / 1000}s` };
  if (kind === 'openai') return { error: 429, headers: { 'retry-after-ms': String(waitMs) } };
  return { error: 429, headers: { 'retry-after': String(Math.ceil(waitMs / 1000)) } };
}

const fakes = new Map<ProviderKind, FakeLlm>();
const models = new Map<ProviderKind, ResolutionModel>();
/** The same models with a short call timeout, for the one case that must hit it. */
const impatientModels = new Map<ProviderKind, ResolutionModel>();

beforeAll(async () => {
  for (const kind of PROVIDER_KINDS) {
    const fake = await startFakeLlm(kind);
    fakes.set(kind, fake);
    // The fake's answers never come near a 4 s call timeout, however loaded the machine; the
    // timeout itself is exercised with a provider that never answers and a 300 ms timeout.
    for (const [timeout, into] of [
      ['4000', models],
      ['300', impatientModels],
    ] as const) {
      const config = testConfig({
        AI_MODEL_1_PROVIDER: kind,
        AI_MODEL_1_BASE_URL: fake.baseUrl,
        AI_MODEL_1_API_KEY: KEY,
        AI_MODEL_1_TIMEOUT_MS: timeout,
        AI_MODEL_1_MAX_OUTPUT_TOKENS: '512',
        // The plain answer path; web search and tools: test/ai/search-*.test.ts.
        AI_WEB_SEARCH: 'off',
        ...(kind === 'openai-compatible'
          ? { AI_MODEL_1_NAME: 'mistral', AI_MODEL_1_ID: 'mistral-large-latest' }
          : {}),
      });
      const model = createLiveModels(config.ai.slots, new ManualClock()).models[0];
      if (!model) throw new Error(`no ${kind} model`);
      into.set(kind, model);
    }
  }
});
afterAll(async () => {
  for (const fake of fakes.values()) await fake.close();
});

async function ask(
  kind: ProviderKind,
  reply: FakeReply | ((call: number) => FakeReply),
  deadlineMs = 8000,
  from = models,
) {
  const fake = fakes.get(kind) as FakeLlm;
  fake.setReply((_request, call) => (typeof reply === 'function' ? reply(call) : reply));
  const before = fake.server.requests.length;
  const vote = await askModel(from.get(kind) as ResolutionModel, 0, prompt, {
    deadline: AbortSignal.timeout(deadlineMs),
    deadlineAt: performance.now() + deadlineMs,
    clock: new ManualClock(),
    retries: 1,
  });
  return { vote, calls: fake.server.requests.length - before, fake };
}

function failed(vote: Vote) {
  return { outcomeIndex: vote.outcomeIndex, confidence: vote.confidence, kind: vote.error?.kind };
}

const NAMES: Record<ProviderKind, string> = {
  openai: 'openai/gpt-4.1-mini',
  anthropic: 'anthropic/claude-sonnet-4-5',
  google: 'google/gemini-2.5-flash',
  xai: 'xai/grok-4',
  'openai-compatible': 'mistral/mistral-large-latest',
};

describe.each(PROVIDER_KINDS)('%s adapter', (kind) => {
  it('a schema-valid answer is a vote, with its token usage and latency', async () => {
    const { vote, calls, fake } = await ask(kind, {
      answer: { outcomeIndex: 1, confidence: 0.82, reasoning: 'No splashdown was reported.' },
      usage: { input: 412, output: 37 },
    });
    expect(calls).toBe(1);
    expect(vote).toEqual({
      position: 0,
      model: NAMES[kind],
      outcomeIndex: 1,
      confidence: 0.82,
      reasoning: 'No splashdown was reported.',
      latencyMs: expect.any(Number),
      error: null,
      usage: { inputTokens: 412, outputTokens: 37 },
      evidence: [],
      // Search is off here: none made, where the provider has one.
      searches: kind === 'openai-compatible' ? null : 0,
      abstainReason: null,
      // Turned off for these fakes; an OpenAI-compatible endpoint has none to turn off.
      search: kind === 'openai-compatible' ? 'unavailable' : 'off',
    });
    const request = fake.server.requests.at(-1);
    const asked = fake.asked().at(-1);
    expect(request?.method).toBe('POST');
    // Each provider's own authentication header, and the answer schema as structured output.
    if (kind === 'anthropic') {
      expect(request?.headers['x-api-key']).toBe(KEY);
      expect(request?.headers['anthropic-version']).toBe('2023-06-01');
      expect(request?.url.pathname).toBe('/v1/messages');
    } else if (kind === 'google') {
      expect(request?.headers['x-goog-api-key']).toBe(KEY);
      expect(request?.url.pathname).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
      expect(asked?.body.generationConfig).toMatchObject({ responseMimeType: 'application/json' });
    } else {
      expect(request?.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(request?.url.pathname).toBe(
        kind === 'openai' || kind === 'xai' ? '/v1/responses' : '/v1/chat/completions',
      );
    }
    expect(asked?.schema).toMatchObject({
      type: 'object',
      properties: {
        outcomeIndex: expect.any(Object),
        confidence: expect.any(Object),
        reasoning: expect.any(Object),
        abstainReason: expect.any(Object),
      },
      required: ['outcomeIndex', 'confidence', 'reasoning', 'abstainReason'],
    });
    expect(asked?.system).toBe(prompt.system);
    expect(asked?.user).toBe(prompt.user);
    expect(JSON.stringify(asked?.body)).toContain('512'); // the output-token cap
  });

  it('"cannot determine" (null) is a valid answer, not a failure', async () => {
    const { vote } = await ask(kind, {
      answer: { outcomeIndex: null, confidence: 0.3, reasoning: 'Unknown.' },
    });
    expect({ outcomeIndex: vote.outcomeIndex, error: vote.error, abstainReason: vote.abstainReason }).toEqual(
      {
        outcomeIndex: null,
        error: null,
        abstainReason: 'insufficient_evidence',
      },
    );
  });

  it('"cannot determine" keeps the reason the model gave, through the provider’s own format', async () => {
    const { vote } = await ask(kind, {
      answer: { outcomeIndex: null, confidence: 0.2, reasoning: 'Not yet.', abstainReason: 'too_early' },
    });
    expect({ outcomeIndex: vote.outcomeIndex, error: vote.error, abstainReason: vote.abstainReason }).toEqual(
      {
        outcomeIndex: null,
        error: null,
        abstainReason: 'too_early',
      },
    );
  });

  it('an HTTP error fails the model, and its message never quotes the provider (which may echo the key)', async () => {
    const { vote, calls } = await ask(kind, { error: 401, message: `Incorrect API key provided: ${KEY}` });
    expect(calls).toBe(1); // not retried
    expect(failed(vote)).toEqual({ outcomeIndex: null, confidence: null, kind: 'http_error' });
    expect(vote.error?.message).toMatch(/^HTTP 401/);
    expect(JSON.stringify(vote)).not.toContain(KEY);
  });

  it('a server error is retried once, then the model fails', async () => {
    const { vote, calls } = await ask(kind, { error: 500 });
    expect(calls).toBe(2);
    expect(failed(vote).kind).toBe('http_error');
  });

  it('a 429 whose retry hint ends before the deadline is retried after it, and the answer counts', async () => {
    const { vote, calls } = await ask(kind, (call) =>
      call % 2 === 1
        ? rateLimited(kind, kind === 'google' || kind === 'openai' ? 20 : 0)
        : { answer: { outcomeIndex: 0, confidence: 0.9, reasoning: 'Yes.' } },
    );
    expect(calls).toBe(2);
    expect(vote.error).toBeNull();
    expect(vote.outcomeIndex).toBe(0);
  });

  it('a 429 asking to wait past the deadline fails the model at once, without waiting', async () => {
    const { vote, calls } = await ask(kind, rateLimited(kind, 60_000), 2000);
    expect(calls).toBe(1);
    expect(failed(vote).kind).toBe('rate_limited');
    expect(vote.error?.message).toMatch(/^HTTP 429/);
  });

  it('no answer within the call timeout is a timeout', async () => {
    const { vote } = await ask(kind, { hangMs: 60_000 }, 8000, impatientModels);
    expect(failed(vote).kind).toBe('timeout');
  });

  it('prose instead of JSON fails the model', async () => {
    const { vote } = await ask(kind, { prose: 'The answer is Yes, with high confidence.' });
    expect(failed(vote).kind).toBe('bad_response');
  });

  it('an index out of range fails the model', async () => {
    const { vote } = await ask(kind, { answer: { outcomeIndex: 2, confidence: 0.9, reasoning: 'Third.' } });
    expect(failed(vote).kind).toBe('invalid_answer');
    expect(vote.error?.message).toBe('outcomeIndex 2 is outside 0..1');
  });

  it('a truncated answer fails the model, with the tokens it used', async () => {
    const { vote } = await ask(kind, {
      truncated: '{"outcomeIndex": 0, "confidence": 0.9, "reasoning": "Becau',
    });
    expect(failed(vote).kind).toBe('truncated');
    expect(vote.usage).toEqual({ inputTokens: 371, outputTokens: 29 });
  });

  it('a 200 whose body is not the provider’s format fails the model', async () => {
    const { vote } = await ask(kind, { garbage: '<html>502 Bad Gateway</html>' });
    expect(failed(vote).kind).toBe('bad_response');
  });

  it.each([
    ['a string index', { outcomeIndex: '0', confidence: 0.9, reasoning: 'r' }],
    ['a fractional index', { outcomeIndex: 0.5, confidence: 0.9, reasoning: 'r' }],
    ['a negative index', { outcomeIndex: -1, confidence: 0.9, reasoning: 'r' }],
    ['confidence above 1', { outcomeIndex: 0, confidence: 1.5, reasoning: 'r' }],
    ['no confidence', { outcomeIndex: 0, reasoning: 'r' }],
    ['an extra field', { outcomeIndex: 0, confidence: 0.9, reasoning: 'r', callbackUrl: 'https://evil' }],
    ['an array', [0, 0.9, 'r']],
    ['reasoning too long', { outcomeIndex: 0, confidence: 0.9, reasoning: 'x'.repeat(1001) }],
  ])('%s fails the model', async (_name, answer) => {
    const { vote } = await ask(kind, { answer });
    expect(failed(vote).kind).toBe('invalid_answer');
  });
});

describe('provider specifics', () => {
  it('Anthropic models without structured outputs answer through the forced json tool', async () => {
    const fake = await startFakeLlm('anthropic', () => ({
      answer: { outcomeIndex: 1, confidence: 0.7, reasoning: 'Via the tool.' },
    }));
    try {
      const config = testConfig({
        AI_MODEL_1_PROVIDER: 'anthropic',
        AI_MODEL_1_ID: 'claude-3-haiku-20240307',
        AI_MODEL_1_BASE_URL: fake.baseUrl,
        AI_MODEL_1_API_KEY: KEY,
        AI_WEB_SEARCH: 'off',
      });
      const [model] = createLiveModels(config.ai.slots, new ManualClock()).models;
      const vote = await askModel(model as ResolutionModel, 0, prompt, {
        deadline: AbortSignal.timeout(5000),
        deadlineAt: performance.now() + 5000,
        clock: new ManualClock(),
        retries: 0,
      });
      const asked = fake.asked()[0];
      expect(asked?.body.tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true });
      expect(asked?.body.output_config).toBeUndefined();
      expect(asked?.schema).toMatchObject({
        required: ['outcomeIndex', 'confidence', 'reasoning', 'abstainReason'],
      });
      expect({ outcomeIndex: vote.outcomeIndex, error: vote.error }).toEqual({
        outcomeIndex: 1,
        error: null,
      });
    } finally {
      await fake.close();
    }
  });

  it('an OpenAI-compatible endpoint without a key (a local Ollama) and with JSON mode only (DeepSeek)', async () => {
    const fake = await startFakeLlm('openai-compatible');
    try {
      const config = testConfig({
        AI_MODEL_1_PROVIDER: 'openai-compatible',
        AI_MODEL_1_NAME: 'deepseek',
        AI_MODEL_1_ID: 'deepseek-chat',
        AI_MODEL_1_BASE_URL: fake.baseUrl,
        AI_MODEL_1_RESPONSE_FORMAT: 'json_object',
      });
      const live = createLiveModels(config.ai.slots, new ManualClock());
      expect(live.status[0]).toEqual({ slot: 1, model: 'deepseek/deepseek-chat', configured: true });
      const vote = await askModel(live.models[0] as ResolutionModel, 0, prompt, {
        deadline: AbortSignal.timeout(5000),
        deadlineAt: performance.now() + 5000,
        clock: new ManualClock(),
        retries: 0,
      });
      expect(vote.error).toBeNull();
      const request = fake.server.requests[0];
      expect(request?.headers.authorization).toBeUndefined();
      expect(fake.asked()[0]?.body.response_format).toEqual({ type: 'json_object' });
    } finally {
      await fake.close();
    }
  });

  it('redirects are never followed, and an unreachable provider is a network failure', async () => {
    const target = await startFakeLlm('openai-compatible');
    const redirecting = await startFakeLlm('openai-compatible');
    redirecting.server.setHandler(() => ({
      status: 307,
      headers: { location: `${target.baseUrl}/chat/completions` },
    }));
    try {
      for (const [baseUrl, kind] of [
        [redirecting.baseUrl, 'network'],
        ['http://127.0.0.1:9/v1', 'network'],
      ] as const) {
        const config = testConfig({
          AI_MODEL_1_PROVIDER: 'openai-compatible',
          AI_MODEL_1_ID: 'm',
          AI_MODEL_1_BASE_URL: baseUrl,
        });
        const [model] = createLiveModels(config.ai.slots, new ManualClock()).models;
        const vote = await askModel(model as ResolutionModel, 0, prompt, {
          deadline: AbortSignal.timeout(5000),
          deadlineAt: performance.now() + 5000,
          clock: new ManualClock(),
          retries: 0,
        });
        expect(vote.error?.kind).toBe(kind);
      }
      expect(redirecting.server.requests).toHaveLength(1);
      expect(target.server.requests).toHaveLength(0);
    } finally {
      await target.close();
      await redirecting.close();
    }
  });

  it('answers come compressed as asked (gzip, deflate, br), error answers too; connections are reused', async () => {
    // Provider calls go out through undici's request, not fetch (docs/performance.md#ai-evaluation):
    // what fetch did for them must still hold.
    const encoders: Record<string, (body: Buffer) => Buffer> = {
      gzip: gzipSync,
      deflate: deflateSync,
      'deflate-raw': deflateRawSync,
      br: brotliCompressSync,
      identity: (body) => body,
    };
    let coding = 'gzip';
    let status = 200;
    let connections = 0;
    const acceptEncodings: (string | undefined)[] = [];
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      acceptEncodings.push(req.headers['accept-encoding']);
      req.resume();
      req.on('end', () => {
        const body =
          status === 200
            ? {
                id: 'chatcmpl-1',
                object: 'chat.completion',
                created: 1770933883,
                model: 'm',
                choices: [
                  {
                    index: 0,
                    message: {
                      role: 'assistant',
                      content: JSON.stringify({ outcomeIndex: 1, confidence: 0.8, reasoning: 'It did not.' }),
                    },
                    finish_reason: 'stop',
                  },
                ],
                usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
              }
            : { error: { message: 'overloaded', type: 'server_error', code: 'overloaded_now' } };
        const encoded = (encoders[coding] as (b: Buffer) => Buffer)(Buffer.from(JSON.stringify(body)));
        res.writeHead(status, {
          'content-type': 'application/json',
          'content-encoding': coding === 'deflate-raw' ? 'deflate' : coding,
        });
        res.end(encoded);
      });
    });
    server.on('connection', () => {
      connections += 1;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const config = testConfig({
        AI_MODEL_1_PROVIDER: 'openai-compatible',
        AI_MODEL_1_ID: 'm',
        AI_MODEL_1_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
      });
      const [model] = createLiveModels(config.ai.slots, new ManualClock()).models;
      const ask = () =>
        askModel(model as ResolutionModel, 0, prompt, {
          deadline: AbortSignal.timeout(5000),
          deadlineAt: performance.now() + 5000,
          clock: new ManualClock(),
          retries: 0,
        });
      for (const next of Object.keys(encoders)) {
        coding = next;
        const vote = await ask();
        expect(vote.error, coding).toBeNull();
        expect(vote.outcomeIndex, coding).toBe(1);
        expect(vote.usage, coding).toEqual({ inputTokens: 10, outputTokens: 5 });
      }
      coding = 'gzip';
      status = 503;
      const failed = await ask();
      expect(failed.error).toEqual({ kind: 'http_error', message: 'HTTP 503 (overloaded_now)' });
      expect(acceptEncodings.every((value) => value === 'gzip, deflate, br')).toBe(true);
      // Six calls one after another over kept-alive connections (the pool may open a second one
      // when a call starts before the last one's connection is handed back).
      expect(acceptEncodings).toHaveLength(6);
      expect(connections).toBeLessThanOrEqual(2);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a slot is configured only with what its provider needs', () => {
    const config = testConfig({
      AI_MODEL_1_API_KEY: 'k1',
      AI_MODEL_4_PROVIDER: 'openai-compatible',
      AI_MODEL_4_NAME: 'ollama',
      AI_MODEL_4_ID: 'llama3.1',
    });
    expect(createLiveModels(config.ai.slots, new ManualClock()).status).toEqual([
      { slot: 1, model: 'openai/gpt-4.1-mini', configured: true },
      {
        slot: 2,
        model: 'anthropic/claude-sonnet-4-5',
        configured: false,
        reason: 'AI_MODEL_2_API_KEY is not set',
      },
      {
        slot: 3,
        model: 'google/gemini-2.5-flash',
        configured: false,
        reason: 'AI_MODEL_3_API_KEY is not set',
      },
      { slot: 4, model: 'ollama/llama3.1', configured: false, reason: 'AI_MODEL_4_BASE_URL is not set' },
    ]);
  });

  it('a lease shorter than the deadline is refused at start-up', () => {
    expect(() => testConfig({ AI_DEADLINE_MS: '60000', AI_LEASE_MS: '30000' })).toThrow(
      'Invalid configuration: AI_LEASE_MS (30000) must be at least AI_DEADLINE_MS + 1000 (61000)',
    );
  });
});
