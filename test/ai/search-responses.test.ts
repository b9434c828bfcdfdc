import { afterAll, describe, expect, it } from 'vitest';
import {
  ANSWER,
  ask,
  type Body,
  CITED,
  CITED_TITLE,
  closeFakes,
  droppedCounts,
  fake,
  functionCall,
  modelFor,
  now,
  priceTools,
  promptWith,
  responsesAnswer,
  responsesMessage,
  searchCall,
  toolsOf,
  urlCitation,
} from './search-helpers.js';

/**
 * OpenAI's and xAI's web search through the Responses API (docs/ai.md#web-search), against a local
 * server in their shapes: the search and its citations in one call with the answer, a Sibyl tool
 * call and its result in the next request, a failed search, a javascript: citation dropped and
 * counted, and no search tool when search is off.
 */

afterAll(closeFakes);

describe.each(['openai', 'xai'] as const)('%s web search (Responses API)', (kind) => {
  const searchUsage = kind === 'xai' ? { num_sources_used: 0, num_server_side_tools_used: 1 } : {};

  it('searches, cites and answers in one call: the citation is evidence, the searches counted', async () => {
    const { server, bodies } = await fake(() =>
      responsesAnswer(
        kind,
        [
          searchCall(kind),
          responsesMessage(kind, JSON.stringify(ANSWER), [urlCitation(kind, CITED, CITED_TITLE)]),
        ],
        searchUsage,
      ),
    );
    const vote = await ask(modelFor(kind, `${server.url}/v1`, { AI_MAX_SEARCHES: '2' }), promptWith());
    expect(vote.error).toBeNull();
    expect(vote.outcomeIndex).toBe(0);
    expect(vote.searches).toBe(1);
    expect(vote.search).toBe('on');
    const web = vote.evidence.filter((e) => e.kind === 'web');
    expect(web[0]).toEqual({
      kind: 'web',
      url: CITED,
      title: CITED_TITLE,
      quote: null,
      retrievedAt: now.toISOString(),
    });
    const [body] = bodies();
    expect(server.requests[0]?.url.pathname).toBe('/v1/responses');
    expect(toolsOf(body as Body)).toContainEqual(expect.objectContaining({ type: 'web_search' }));
    // Search, tools and the answer schema share the call.
    expect(body?.text).toMatchObject({ format: { type: 'json_schema' } });
    if (kind === 'openai') {
      expect(body?.max_tool_calls).toBe(2);
      expect(body?.include).toEqual(['web_search_call.action.sources']);
      // The pages the search opened but the answer does not cite follow the citation.
      expect(web.map((e) => e.url)).toEqual([CITED, 'https://www.nasa.gov/mission/artemis-ii/']);
    }
  });

  it('calls a Sibyl tool, gets its result in the next request, and keeps the call as evidence', async () => {
    const calls: unknown[] = [];
    const { server, bodies } = await fake((body) => {
      const input = body.input as Body[];
      const answered = input.some((item) => item.type === 'function_call_output');
      return answered
        ? responsesAnswer(
            kind,
            [
              searchCall(kind),
              responsesMessage(kind, JSON.stringify(ANSWER), [urlCitation(kind, CITED, 'R')]),
            ],
            searchUsage,
          )
        : responsesAnswer(kind, [functionCall]);
    });
    const vote = await ask(modelFor(kind, `${server.url}/v1`), promptWith({ tools: priceTools(calls) }));
    expect(vote.error).toBeNull();
    expect(calls).toEqual([{ symbol: 'BTCUSD', at: '2026-04-30T00:00:00Z' }]);
    const [first, second] = bodies();
    expect(bodies()).toHaveLength(2);
    expect(toolsOf(first as Body)).toContainEqual(
      expect.objectContaining({ type: 'function', name: 'sibyl_price' }),
    );
    const input = second?.input as Body[];
    expect(input).toContainEqual(
      expect.objectContaining({ type: 'function_call', call_id: functionCall.call_id, name: 'sibyl_price' }),
    );
    const output = input.find((item) => item.type === 'function_call_output');
    expect(output).toMatchObject({ call_id: functionCall.call_id });
    expect(JSON.parse(String(output?.output))).toEqual({
      symbol: 'BTCUSD',
      vwap: '97123.45',
      interval: '1m',
      valid: true,
    });
    // In the order used: the tool call first, then the citation of the last step (the SDK's
    // result.sources would hold only the last step's).
    expect(vote.evidence[0]).toEqual({
      kind: 'sibyl',
      tool: 'sibyl_price',
      input: { symbol: 'BTCUSD', at: '2026-04-30T00:00:00Z' },
      output: { symbol: 'BTCUSD', vwap: '97123.45', interval: '1m', valid: true },
    });
    expect(vote.evidence[1]).toMatchObject({ kind: 'web', url: CITED });
    expect(vote.searches).toBe(1);
  });

  it('a failed search is no error: the model answers, and a javascript: citation is dropped and counted', async () => {
    const before = (await droppedCounts()).url ?? 0;
    const { server } = await fake(() =>
      responsesAnswer(kind, [
        searchCall(kind, 'failed'),
        responsesMessage(kind, JSON.stringify(ANSWER), [
          // biome-ignore lint/suspicious/noAlert: the URL a hostile page could carry
          urlCitation(kind, 'javascript:alert(document.cookie)', 'Click me'),
          urlCitation(kind, CITED, CITED_TITLE),
        ]),
      ]),
    );
    const vote = await ask(modelFor(kind, `${server.url}/v1`), promptWith());
    expect(vote.error).toBeNull();
    // A failed search opened no page: only the citation that is an http(s) URL is kept.
    expect(vote.evidence.map((e) => (e.kind === 'web' ? e.url : e.tool))).toEqual([CITED]);
    expect((await droppedCounts()).url).toBe(before + 1);
  });

  it('--search off and AI_MODEL_n_WEB_SEARCH=off send no search tool', async () => {
    const { server, bodies } = await fake(() =>
      responsesAnswer(kind, [responsesMessage(kind, JSON.stringify(ANSWER), [])]),
    );
    const on = modelFor(kind, `${server.url}/v1`);
    const offByPrompt = await ask(on, promptWith({ webSearch: false, tools: priceTools() }));
    const slotOff = modelFor(kind, `${server.url}/v1`, { AI_MODEL_1_WEB_SEARCH: 'off' });
    const vote = await ask(slotOff, promptWith());
    const globalOff = modelFor(kind, `${server.url}/v1`, {
      AI_WEB_SEARCH: 'off',
      AI_MODEL_1_WEB_SEARCH: 'on',
    });
    const onBySlot = await ask(globalOff, promptWith());
    const [first, second, third] = bodies();
    expect(toolsOf(first as Body).map((t) => t.type)).toEqual(['function']);
    expect(second?.tools).toBeUndefined();
    if (kind === 'openai') expect(second?.include).toBeUndefined();
    expect(vote.searches).toBe(0);
    // The vote says search was turned off, whichever switch did it.
    expect(vote.search).toBe('off');
    expect(offByPrompt.search).toBe('off');
    expect(onBySlot.search).toBe('on');
    // The slot's own switch wins over AI_WEB_SEARCH.
    expect(toolsOf(third as Body).map((t) => t.type)).toEqual(['web_search']);
  });
});
