import { createXai, type XaiProvider } from '@ai-sdk/xai';
import type { ModelSlot } from '../config.js';
import type { ResolutionModel } from '../types.js';
import type { NativeSearch } from './grounding.js';
import { type AdapterDeps, sdkModel } from './sdk.js';

export const XAI_BASE_URL = 'https://api.x.ai/v1';

/**
 * xAI's web search (Agent Tools: `tools[{type:"web_search"}]` on the Responses API; the chat API's
 * Live Search is gone). No cap the SDK can send: a call searches as often as the model decides.
 * Searches: `usage.num_server_side_tools_used` (every server-side tool, only web search is offered).
 * Citations (`url_citation`) carry no quoted text.
 */
export const xaiSearch = (provider: XaiProvider): NativeSearch => ({
  tool: () => provider.tools.webSearch(),
  withOutput: true,
  withFunctions: true,
  count: (step) => {
    const raw = step.usage.raw as { num_server_side_tools_used?: unknown } | undefined;
    const count = raw?.num_server_side_tools_used;
    return typeof count === 'number' ? count : 0;
  },
});

/**
 * xAI's Grok through its Responses API (`POST {base}/responses`, `text.format` json_schema), the one
 * that has web search. `store: false`: questions are not kept on xAI's side.
 */
export function createXaiModel(slot: ModelSlot, deps: AdapterDeps): ResolutionModel {
  const provider = createXai({
    apiKey: slot.apiKey ?? '',
    baseURL: slot.baseUrl ?? XAI_BASE_URL,
    fetch: deps.fetch,
  });
  return sdkModel(slot, provider.responses(slot.model), deps, {
    providerOptions: { xai: { store: false } },
    search: xaiSearch(provider),
  });
}
