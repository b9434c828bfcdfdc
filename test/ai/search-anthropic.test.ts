import { afterAll, describe, expect, it } from 'vitest';
import {
  ANSWER,
  anthropicMessage,
  ask,
  type Body,
  CITED,
  CITED_TITLE,
  citedText,
  closeFakes,
  fake,
  isAnswerCall,
  modelFor,
  now,
  priceTools,
  promptWith,
  QUOTE,
  searchResult,
  serverToolUse,
  toolsOf,
} from './search-helpers.js';

/**
 * Anthropic's web search through the Messages API (docs/ai.md#web-search), against a local server in
 * its shapes: search (and Sibyl's tools) first, then the answer in a call without search; max_uses,
 * quotes, max_uses_exceeded, pause_turn resumed or ending truncated, and a 20 KB quote cut.
 */

afterAll(closeFakes);

describe('anthropic web search (Messages API)', () => {
  it('searches with max_uses, cites with quotes, then answers without search: citations and schema never share a call', async () => {
    const { server, bodies } = await fake((body) =>
      isAnswerCall(body)
        ? anthropicMessage([{ type: 'text', text: JSON.stringify(ANSWER) }])
        : anthropicMessage(
            [
              serverToolUse,
              searchResult([
                { url: CITED, title: CITED_TITLE },
                { url: 'https://example.org/uncited', title: 'Not cited' },
              ]),
              { type: 'text', text: 'Based on the search results:\n\n' },
              citedText('The crew splashed down on April 10.', [
                { url: CITED, title: CITED_TITLE, quote: QUOTE },
              ]),
            ],
            'end_turn',
            2,
          ),
    );
    const vote = await ask(modelFor('anthropic', `${server.url}/v1`, { AI_MAX_SEARCHES: '4' }), promptWith());
    expect(vote.error).toBeNull();
    expect(vote.outcomeIndex).toBe(0);
    expect(vote.searches).toBe(2);
    // Only what the answer cites, with the cited text; results it did not cite are not evidence.
    expect(vote.evidence).toEqual([
      { kind: 'web', url: CITED, title: CITED_TITLE, quote: QUOTE, retrievedAt: now.toISOString() },
    ]);
    const [search, answer] = bodies();
    expect(toolsOf(search as Body)).toEqual([
      { type: 'web_search_20250305', name: 'web_search', max_uses: 4 },
    ]);
    expect(search?.output_config).toBeUndefined();
    expect(answer?.tools).toBeUndefined();
    expect(answer?.output_config).toMatchObject({ format: { type: 'json_schema' } });
    // The answer call carries the model's own notes, never a source's text.
    const sent = JSON.stringify(answer);
    expect(sent).toContain('The crew splashed down on April 10.');
    expect(sent).not.toContain(QUOTE);
    expect(sent).not.toContain('Er0DCioICBgCIiRi');
  });

  it('calls a Sibyl tool beside search; the next request carries its tool_result', async () => {
    const calls: unknown[] = [];
    const { bodies, server } = await fake((body) => {
      if (isAnswerCall(body)) return anthropicMessage([{ type: 'text', text: JSON.stringify(ANSWER) }]);
      const messages = body.messages as { content: Body[] | string }[];
      const last = messages.at(-1)?.content;
      const answered = Array.isArray(last) && last.some((block) => block.type === 'tool_result');
      if (!answered) {
        return anthropicMessage(
          [
            {
              type: 'tool_use',
              id: 'toolu_01PQjhxo3eirCdKNvCJrKc8f',
              name: 'sibyl_price',
              input: { symbol: 'BTCUSD', at: '2026-04-30T00:00:00Z' },
            },
          ],
          'tool_use',
        );
      }
      return anthropicMessage(
        [
          serverToolUse,
          searchResult([{ url: CITED, title: CITED_TITLE }]),
          citedText('Sibyl and Reuters agree.', [{ url: CITED, title: CITED_TITLE, quote: QUOTE }]),
        ],
        'end_turn',
        1,
      );
    });
    const vote = await ask(
      modelFor('anthropic', `${server.url}/v1`),
      promptWith({ tools: priceTools(calls) }),
    );
    expect(vote.error).toBeNull();
    expect(calls).toHaveLength(1);
    const [first, second, answer] = bodies();
    expect(toolsOf(first as Body).map((t) => t.name)).toEqual(['web_search', 'sibyl_price']);
    const messages = second?.messages as { role: string; content: Body[] }[];
    expect(messages.at(-2)?.content).toContainEqual(
      expect.objectContaining({
        type: 'tool_use',
        id: 'toolu_01PQjhxo3eirCdKNvCJrKc8f',
        name: 'sibyl_price',
      }),
    );
    const result = messages.at(-1)?.content.find((block) => block.type === 'tool_result');
    expect(result).toMatchObject({ tool_use_id: 'toolu_01PQjhxo3eirCdKNvCJrKc8f' });
    expect(JSON.stringify(result)).toContain('97123.45');
    expect(answer?.tools).toBeUndefined();
    expect(vote.evidence.map((e) => e.kind)).toEqual(['sibyl', 'web']);
    expect(vote.searches).toBe(1);
  });

  it('max_uses_exceeded is a search error, not a failure: the model still answers', async () => {
    const { server } = await fake((body) =>
      isAnswerCall(body)
        ? anthropicMessage([{ type: 'text', text: JSON.stringify(ANSWER) }])
        : anthropicMessage(
            [
              serverToolUse,
              {
                type: 'web_search_tool_result',
                tool_use_id: serverToolUse.id,
                content: { type: 'web_search_tool_result_error', error_code: 'max_uses_exceeded' },
              },
              { type: 'text', text: 'I could not search further.' },
            ],
            'end_turn',
            3,
          ),
    );
    const vote = await ask(modelFor('anthropic', `${server.url}/v1`), promptWith());
    expect(vote.error).toBeNull();
    expect(vote.outcomeIndex).toBe(0);
    expect(vote.evidence).toEqual([]);
    expect(vote.searches).toBe(3);
  });

  it('pause_turn: the paused turn is sent back as it is, with the searches left, and resumed to its citations', async () => {
    const { server, bodies } = await fake((body) => {
      if (isAnswerCall(body)) return anthropicMessage([{ type: 'text', text: JSON.stringify(ANSWER) }]);
      const messages = body.messages as { role: string; content: Body[] | string }[];
      // The first call pauses after one search; the resend (ending with the paused answer) finishes.
      if (messages.at(-1)?.role === 'user') {
        return anthropicMessage(
          [serverToolUse, searchResult([{ url: CITED, title: CITED_TITLE }])],
          'pause_turn',
          1,
        );
      }
      return anthropicMessage(
        [
          citedText('The crew splashed down on April 10.', [
            { url: CITED, title: CITED_TITLE, quote: QUOTE },
          ]),
        ],
        'end_turn',
        1,
      );
    });
    const vote = await ask(modelFor('anthropic', `${server.url}/v1`, { AI_MAX_SEARCHES: '3' }), promptWith());
    expect(vote.error).toBeNull();
    expect(vote.searches).toBe(2);
    // The citation came in the resumed turn: without the resend there would be none.
    expect(vote.evidence).toEqual([
      { kind: 'web', url: CITED, title: CITED_TITLE, quote: QUOTE, retrievedAt: now.toISOString() },
    ]);
    const [paused, resumed, answer] = bodies();
    expect(bodies()).toHaveLength(3);
    expect(toolsOf(paused as Body)).toEqual([
      { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
    ]);
    // The resend: the question, then the paused answer's blocks unchanged (encrypted content
    // included, as Anthropic requires), with the searches left of the cap.
    expect(toolsOf(resumed as Body)).toEqual([
      { type: 'web_search_20250305', name: 'web_search', max_uses: 2 },
    ]);
    const messages = resumed?.messages as { role: string; content: Body[] }[];
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(messages[1]?.content.map((block) => block.type)).toEqual([
      'server_tool_use',
      'web_search_tool_result',
    ]);
    expect(JSON.stringify(messages[1])).toContain('Er0DCioICBgCIiRi');
    // The answer call gets the model's notes of the whole turn.
    expect(JSON.stringify(answer)).toContain('The crew splashed down on April 10.');
  });

  it('pause_turn without end: resent while searches are left, then the model fails as truncated', async () => {
    const { server, bodies } = await fake((body) =>
      isAnswerCall(body)
        ? anthropicMessage([{ type: 'text', text: JSON.stringify(ANSWER) }])
        : anthropicMessage(
            [serverToolUse, searchResult([{ url: CITED, title: CITED_TITLE }])],
            'pause_turn',
            1,
          ),
    );
    const vote = await ask(modelFor('anthropic', `${server.url}/v1`, { AI_MAX_SEARCHES: '2' }), promptWith());
    expect(vote.error).toEqual({
      kind: 'truncated',
      message: 'the provider paused its search turn past the search cap',
    });
    expect(vote.outcomeIndex).toBeNull();
    expect(vote.search).toBe('on');
    // Two calls of one search each: the cap; no answer call from incomplete notes.
    expect(bodies().map((body) => toolsOf(body).map((t) => t.max_uses))).toEqual([[2], [1]]);
  });

  it('a 20 KB quote is cut to 500 characters', async () => {
    const long = 'x'.repeat(20_000);
    const { server } = await fake((body) =>
      isAnswerCall(body)
        ? anthropicMessage([{ type: 'text', text: JSON.stringify(ANSWER) }])
        : anthropicMessage(
            [
              serverToolUse,
              searchResult([{ url: CITED, title: CITED_TITLE }]),
              citedText('Long.', [{ url: CITED, title: CITED_TITLE, quote: long }]),
            ],
            'end_turn',
            1,
          ),
    );
    const vote = await ask(modelFor('anthropic', `${server.url}/v1`), promptWith());
    const [item] = vote.evidence;
    expect(item?.kind === 'web' ? item.quote : null).toBe('x'.repeat(500));
  });
});
