import { createOpenAI, type OpenAIProvider } from '@ai-sdk/openai';
import type { ModelSlot } from '../config.js';
import type { ResolutionModel } from '../types.js';
import type { NativeSearch } from './grounding.js';
import { type AdapterDeps, sdkModel } from './sdk.js';

export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/**
 * OpenAI's web search on the Responses API (`tools[{type:"web_search"}]`), capped by
 * `max_tool_calls`; it shares one call with function tools and the answer schema. Each
 * `web_search_call` is one search; citations (`url_citation`) carry no quoted text.
 */
export const openaiSearch = (provider: OpenAIProvider): NativeSearch => ({
  tool: () => provider.tools.webSearch({ searchContextSize: 'low' }),
  providerOptions: (maxSearches) => ({ openai: { maxToolCalls: maxSearches } }),
  withOutput: true,
  withFunctions: true,
  count: (step) =>
    step.content.filter(
      (part) => part.type === 'tool-call' && part.providerExecuted && part.toolName === 'web_search',
    ).length,
});

/**
 * OpenAI through its Responses API (`POST {base}/responses`, `text.format` json_schema, strict).
 * `store: false`: questions are not kept on OpenAI's side for later retrieval.
 */
export function createOpenAIModel(slot: ModelSlot, deps: AdapterDeps): ResolutionModel {
  const provider = createOpenAI({
    apiKey: slot.apiKey ?? '',
    baseURL: slot.baseUrl ?? OPENAI_BASE_URL,
    fetch: deps.fetch,
  });
  return sdkModel(slot, provider.responses(slot.model), deps, {
    providerOptions: { openai: { store: false } },
    search: openaiSearch(provider),
  });
}
