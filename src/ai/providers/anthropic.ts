import { type AnthropicProvider, createAnthropic } from '@ai-sdk/anthropic';
import type { ModelSlot } from '../config.js';
import type { ResolutionModel } from '../types.js';
import type { NativeSearch } from './grounding.js';
import { type AdapterDeps, sdkModel } from './sdk.js';

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com/v1';

/**
 * Anthropic's web search (`web_search_20250305`, at most `max_uses` searches a call). Its citations
 * cannot share a call with structured output (the API refuses, or the SDK's `json` tool drops the
 * text and its citations), so the model searches (and calls Sibyl's tools) first and answers in a
 * second call. Searches: `usage.server_tool_use.web_search_requests`. A citation carries the quoted
 * text (`cited_text`); a search result the answer does not cite is not kept.
 */
export const anthropicSearch = (provider: AnthropicProvider): NativeSearch => ({
  tool: (maxSearches) => provider.tools.webSearch_20250305({ maxUses: maxSearches }),
  withOutput: false,
  withFunctions: true,
  count: (step) => {
    const usage = step.providerMetadata?.anthropic?.usage as
      | { server_tool_use?: { web_search_requests?: unknown } }
      | undefined;
    const count = usage?.server_tool_use?.web_search_requests;
    return typeof count === 'number' ? count : 0;
  },
  cited: (source) => typeof source.providerMetadata?.anthropic?.citedText === 'string',
  quote: (source) => {
    const text = source.providerMetadata?.anthropic?.citedText;
    return typeof text === 'string' ? text : null;
  },
});

/**
 * Anthropic's Messages API (`POST {base}/messages`). Models with structured outputs get
 * `output_config.format`; older ones a forced `json` tool — the SDK chooses by model id, and the
 * answer is checked the same way either way.
 */
export function createAnthropicModel(slot: ModelSlot, deps: AdapterDeps): ResolutionModel {
  const provider = createAnthropic({
    apiKey: slot.apiKey ?? '',
    baseURL: slot.baseUrl ?? ANTHROPIC_BASE_URL,
    fetch: deps.fetch,
  });
  return sdkModel(slot, provider(slot.model), deps, { search: anthropicSearch(provider) });
}
