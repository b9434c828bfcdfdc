// Four fake LLM providers for bench/evaluation.js, run as their own process so that their CPU is
// not the evaluation's: OpenAI (Responses API), Anthropic (Messages API), Google (generateContent)
// and xAI (Responses API), each answering in its provider's wire format (as test/ai/fake-llm.ts
// does) after FAKE_DELAY_MS (200) milliseconds. Prints their base URLs as one JSON line.
// `GET /cpu` on any of them answers at once with the CPU this process has used so far
// (process.cpuUsage, µs), so the bench can report the fakes' share of the shared cores.
import { createServer } from 'node:http';
import { listeningPort } from './listening.js';

const DELAY = Number(process.env.FAKE_DELAY_MS ?? 200);
const usage = { input: 371, output: 29 };

function body(kind, request, text) {
  if (kind === 'openai' || kind === 'xai') {
    return {
      id: 'resp_0465b6d1ae1f97c500699f88318ee481a3b627f7fcb4875152',
      object: 'response',
      created_at: 1772062769,
      status: 'completed',
      model: kind === 'xai' ? 'grok-4' : 'gpt-4.1-mini-2025-04-14',
      output: [
        {
          id: 'msg_0465b6d1ae1f97c500699f8831c4',
          type: 'message',
          status: 'completed',
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
    const viaTool = Array.isArray(request.tools) && request.tools.some((t) => t.name === 'json');
    return {
      model: 'claude-sonnet-4-5-20250929',
      id: 'msg_015rVfxqGkwrrRARo3Uv3C9K',
      type: 'message',
      role: 'assistant',
      content: viaTool
        ? [{ type: 'tool_use', id: 'toolu_01Q9ExVZnzZj7E2QQYHYtNUa', name: 'json', input: JSON.parse(text) }]
        : [{ type: 'text', text }],
      stop_reason: viaTool ? 'tool_use' : 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: usage.input, output_tokens: usage.output },
    };
  }
  if (kind === 'google') {
    return {
      candidates: [{ content: { parts: [{ text }], role: 'model' }, finishReason: 'STOP', index: 0 }],
      usageMetadata: {
        promptTokenCount: usage.input,
        candidatesTokenCount: usage.output,
        totalTokenCount: usage.input + usage.output,
      },
      modelVersion: 'gemini-2.5-flash',
      responseId: 'Un6LacrVMcjUxs0PmJfWoQc',
    };
  }
  return {
    id: 'chatcmpl-D8Z5f52zQqikDBEKQMQoYcWMcWPeU',
    object: 'chat.completion',
    created: 1770933883,
    model: 'grok-4',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: text, refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: {
      prompt_tokens: usage.input,
      completion_tokens: usage.output,
      total_tokens: usage.input + usage.output,
    },
  };
}

const KINDS = [
  ['openai', '/v1'],
  ['anthropic', '/v1'],
  ['google', '/v1beta'],
  ['xai', '/v1'],
];

const urls = await Promise.all(
  KINDS.map(
    ([kind, base]) =>
      new Promise((resolve) => {
        const server = createServer((req, res) => {
          if (req.method === 'GET' && req.url === '/cpu') {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(JSON.stringify(process.cpuUsage()));
            return;
          }
          const chunks = [];
          req.on('data', (c) => chunks.push(c));
          req.on('end', () => {
            const request = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
            const text = JSON.stringify({
              outcomeIndex: 0,
              confidence: 0.9,
              reasoning: 'The benchmark says yes.',
            });
            setTimeout(() => {
              res.writeHead(200, { 'content-type': 'application/json' });
              res.end(JSON.stringify(body(kind, request, text)));
            }, DELAY);
          });
        });
        server.keepAliveTimeout = 60_000;
        server.listen(0, '127.0.0.1', () =>
          resolve({ kind, url: `http://127.0.0.1:${listeningPort(server)}${base}` }),
        );
      }),
  ),
);
process.stdout.write(`${JSON.stringify(urls)}\n`);
