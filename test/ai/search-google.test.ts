import { afterAll, describe, expect, it } from 'vitest';
import {
  ANSWER,
  ask,
  type Body,
  closeFakes,
  fake,
  modelFor,
  now,
  priceTools,
  promptWith,
  toolsOf,
} from './search-helpers.js';

/**
 * Gemini's Google Search grounding (docs/ai.md#web-search), against a local server in its shapes:
 * Gemini 3 searches, calls a tool and answers in one call; Gemini 2.x in separate calls, since the
 * SDK would drop the tools beside search.
 */

afterAll(closeFakes);

function geminiAnswer(parts: unknown[], grounding?: Body): Body {
  return {
    candidates: [
      {
        content: { role: 'model', parts },
        finishReason: 'STOP',
        index: 0,
        ...(grounding ? { groundingMetadata: grounding } : {}),
      },
    ],
    usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 28, totalTokenCount: 347 },
    modelVersion: 'gemini-3-flash-preview',
    responseId: 'Un6LacrVMcjUxs0PmJfWoQc',
  };
}

const REDIRECT = 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/AXiHM1';
const grounding = {
  webSearchQueries: ['Artemis II splashdown', 'Artemis II crew return date'],
  searchEntryPoint: { renderedContent: '<!-- HTML and CSS for the search widget -->' },
  groundingChunks: [{ web: { uri: REDIRECT, title: 'reuters.com' } }],
  groundingSupports: [
    { segment: { startIndex: 0, endIndex: 20, text: 'The crew splashed down.' }, groundingChunkIndices: [0] },
  ],
};

const hasSearch = (body: Body) => toolsOf(body).some((t) => 'googleSearch' in t || 'google_search' in t);
const hasFunctions = (body: Body) => toolsOf(body).some((t) => 'functionDeclarations' in t);

describe('google web search (Google Search grounding)', () => {
  it('Gemini 3: search, a tool call and the schema in one call; the functionResponse goes back', async () => {
    const calls: unknown[] = [];
    const { server, bodies } = await fake((body) => {
      const contents = body.contents as { parts: Body[] }[];
      const answered = contents.some((c) => c.parts.some((p) => 'functionResponse' in p));
      return answered
        ? geminiAnswer([{ text: JSON.stringify(ANSWER) }], grounding)
        : geminiAnswer([
            {
              functionCall: { name: 'sibyl_price', args: { symbol: 'BTCUSD', at: '2026-04-30T00:00:00Z' } },
              thoughtSignature: 'EskgCsYg',
            },
          ]);
    });
    const model = modelFor('google', `${server.url}/v1beta`, { AI_MODEL_1_ID: 'gemini-3-flash-preview' });
    const vote = await ask(model, promptWith({ tools: priceTools(calls) }));
    expect(vote.error).toBeNull();
    expect(calls).toHaveLength(1);
    const [first, second] = bodies();
    expect(bodies()).toHaveLength(2);
    expect(hasSearch(first as Body) && hasFunctions(first as Body)).toBe(true);
    expect(first?.generationConfig).toMatchObject({ responseMimeType: 'application/json' });
    const contents = second?.contents as { role: string; parts: Body[] }[];
    const response = contents.flatMap((c) => c.parts).find((p) => 'functionResponse' in p);
    expect(response).toMatchObject({ functionResponse: { name: 'sibyl_price' } });
    expect(JSON.stringify(response)).toContain('97123.45');
    expect(vote.evidence).toEqual([
      {
        kind: 'sibyl',
        tool: 'sibyl_price',
        input: { symbol: 'BTCUSD', at: '2026-04-30T00:00:00Z' },
        output: { symbol: 'BTCUSD', vwap: '97123.45', interval: '1m', valid: true },
      },
      { kind: 'web', url: REDIRECT, title: 'reuters.com', quote: null, retrievedAt: now.toISOString() },
    ]);
    expect(vote.searches).toBe(2);
  });

  it('Gemini 2.x: search, the tools and the answer in separate calls (the SDK would drop the tools)', async () => {
    const calls: unknown[] = [];
    const { server, bodies } = await fake((body) => {
      if (hasSearch(body)) return geminiAnswer([{ text: 'The crew splashed down on April 10.' }], grounding);
      if (hasFunctions(body)) {
        const contents = body.contents as { parts: Body[] }[];
        const answered = contents.some((c) => c.parts.some((p) => 'functionResponse' in p));
        return answered
          ? geminiAnswer([{ text: 'Sibyl has the price.' }])
          : geminiAnswer([
              { functionCall: { name: 'sibyl_price', args: { symbol: 'BTCUSD', at: '2026-04-30' } } },
            ]);
      }
      return geminiAnswer([{ text: JSON.stringify(ANSWER) }]);
    });
    const vote = await ask(
      modelFor('google', `${server.url}/v1beta`),
      promptWith({ tools: priceTools(calls) }),
    );
    expect(vote.error).toBeNull();
    expect(calls).toHaveLength(1);
    const all = bodies();
    expect(all).toHaveLength(4);
    for (const body of all) {
      // Never Google Search beside function tools or JSON mode on 2.x.
      const json = JSON.stringify(body.generationConfig ?? {}).includes('application/json');
      if (hasSearch(body))
        expect({ functions: hasFunctions(body), json }).toEqual({ functions: false, json: false });
      if (hasFunctions(body)) expect(json).toBe(false);
    }
    const answer = all.find((b) => !hasSearch(b) && !hasFunctions(b));
    expect(answer?.generationConfig).toMatchObject({ responseMimeType: 'application/json' });
    expect(JSON.stringify(answer)).toContain('The crew splashed down on April 10.');
    expect(vote.evidence.map((e) => e.kind).sort()).toEqual(['sibyl', 'web']);
    expect(vote.searches).toBe(2);
  });
});
