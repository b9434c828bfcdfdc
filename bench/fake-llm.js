// A stand-in for four LLM providers, run as its own process so that its CPU is not the service's
// nor the load generator's: one OpenAI-compatible chat-completions server per delay given in
// FAKE_LLM_DELAYS (milliseconds, comma-separated), each answering a schema-valid resolution after
// its delay. With FAKE_LLM_TOOLS=1 each model first calls Sibyl's `sibyl_price` (the
// chat-completions `tool_calls` shape, `finish_reason: "tool_calls"`) and answers once the request
// carries the tool's result, every call after the same delay. Prints the servers' ports as one JSON
// line once they listen.
import { createServer } from 'node:http';
import { listeningPort } from './listening.js';

const delays = (process.env.FAKE_LLM_DELAYS ?? '500,500,500,500').split(',').map(Number);
const tools = process.env.FAKE_LLM_TOOLS === '1';

const ANSWER = {
  role: 'assistant',
  content: JSON.stringify({ outcomeIndex: 0, confidence: 0.9, reasoning: 'The benchmark says yes.' }),
};
const PRICE_CALL = {
  role: 'assistant',
  content: null,
  tool_calls: [
    {
      id: 'call_93562515',
      type: 'function',
      function: { name: 'sibyl_price', arguments: '{"symbol":"SOL","at":"2026-01-01T00:00:00Z"}' },
    },
  ],
};

/** Whether the request already carries a tool's result: the model then answers. */
function answered(body) {
  if (!tools) return true;
  try {
    return JSON.parse(body).messages.some((message) => message.role === 'tool');
  } catch {
    return true;
  }
}

function reply(res, done) {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      id: 'chatcmpl-bench',
      object: 'chat.completion',
      created: 1770933883,
      model: 'bench',
      choices: [
        {
          index: 0,
          message: done ? ANSWER : PRICE_CALL,
          logprobs: null,
          finish_reason: done ? 'stop' : 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 400, completion_tokens: 30, total_tokens: 430 },
    }),
  );
}

const ports = await Promise.all(
  delays.map(
    (delay) =>
      new Promise((resolve) => {
        const server = createServer((req, res) => {
          const chunks = [];
          req.on('data', (chunk) => chunks.push(chunk));
          req.on('end', () => {
            const done = answered(Buffer.concat(chunks).toString('utf8'));
            setTimeout(() => reply(res, done), delay);
          });
        });
        server.keepAliveTimeout = 60_000;
        server.listen(0, '127.0.0.1', () => resolve(listeningPort(server)));
      }),
  ),
);
process.stdout.write(`${JSON.stringify(ports)}\n`);
