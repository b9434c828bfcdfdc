import { afterAll, describe, expect, it } from 'vitest';
import {
  ANSWER,
  ask,
  type Body,
  closeFakes,
  fake,
  modelFor,
  priceTools,
  promptWith,
  toolsOf,
} from './search-helpers.js';

/**
 * A plain OpenAI-compatible endpoint has no web search (docs/ai.md#web-search): no search tool is
 * sent, Sibyl's tool loop still runs, and its votes say searches: null, search: "unavailable".
 */

afterAll(closeFakes);

describe('openai-compatible: no web search', () => {
  it('sends no search tool, still runs the tool loop, and says searches: null, search: "unavailable"', async () => {
    const { server, bodies } = await fake((body) => {
      const messages = body.messages as Body[];
      const answered = messages.some((m) => m.role === 'tool');
      const message = answered
        ? { role: 'assistant', content: JSON.stringify(ANSWER) }
        : {
            role: 'assistant',
            content: '',
            tool_calls: [
              {
                id: 'call_93562515',
                type: 'function',
                function: { name: 'sibyl_price', arguments: '{"symbol":"BTCUSD","at":"2026-04-30"}' },
              },
            ],
          };
      return {
        id: 'chatcmpl-61c0468b',
        object: 'chat.completion',
        created: 1770774041,
        model: 'mistral-large-latest',
        choices: [{ index: 0, message, finish_reason: answered ? 'stop' : 'tool_calls' }],
        usage: { prompt_tokens: 291, completion_tokens: 26, total_tokens: 317 },
      };
    });
    const vote = await ask(
      modelFor('openai-compatible', `${server.url}/v1`),
      promptWith({ tools: priceTools() }),
    );
    expect(vote.error).toBeNull();
    expect(vote.searches).toBeNull();
    // No search to offer, whatever AI_WEB_SEARCH says (on by default), and not even --search off changes it.
    expect(vote.search).toBe('unavailable');
    const model = modelFor('openai-compatible', `${server.url}/v1`, { AI_MODEL_1_WEB_SEARCH: 'on' });
    expect(model.searchMode?.(promptWith())).toBe('unavailable');
    expect(model.searchMode?.(promptWith({ webSearch: false }))).toBe('unavailable');
    const [first, second] = bodies();
    expect(toolsOf(first as Body)).toEqual([
      expect.objectContaining({
        type: 'function',
        function: expect.objectContaining({ name: 'sibyl_price' }),
      }),
    ]);
    expect(second?.messages).toContainEqual(
      expect.objectContaining({ role: 'tool', tool_call_id: 'call_93562515' }),
    );
    expect(vote.evidence).toEqual([
      expect.objectContaining({
        kind: 'sibyl',
        tool: 'sibyl_price',
        input: { symbol: 'BTCUSD', at: '2026-04-30' },
      }),
    ]);
  });
});
