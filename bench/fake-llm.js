// A stand-in for four LLM providers, run as its own process so that its CPU is not the service's
// nor the load generator's: one OpenAI-compatible chat-completions server per delay given in
// FAKE_LLM_DELAYS (milliseconds, comma-separated), each answering a schema-valid resolution after
// its delay. Prints the servers' ports as one JSON line once they listen.
import { createServer } from 'node:http';
import { listeningPort } from './listening.js';

const delays = (process.env.FAKE_LLM_DELAYS ?? '500,500,500,500').split(',').map(Number);

function answer(res) {
  const content = JSON.stringify({ outcomeIndex: 0, confidence: 0.9, reasoning: 'The benchmark says yes.' });
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      id: 'chatcmpl-bench',
      object: 'chat.completion',
      created: 1770933883,
      model: 'bench',
      choices: [{ index: 0, message: { role: 'assistant', content }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 400, completion_tokens: 30, total_tokens: 430 },
    }),
  );
}

const ports = await Promise.all(
  delays.map(
    (delay) =>
      new Promise((resolve) => {
        const server = createServer((req, res) => {
          req.resume();
          req.on('end', () => setTimeout(() => answer(res), delay));
        });
        server.keepAliveTimeout = 60_000;
        server.listen(0, '127.0.0.1', () => resolve(listeningPort(server)));
      }),
  ),
);
process.stdout.write(`${JSON.stringify(ports)}\n`);
