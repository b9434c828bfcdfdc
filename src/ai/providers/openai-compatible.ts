import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { ModelSlot } from '../config.js';
import type { ResolutionModel } from '../types.js';
import { type AdapterDeps, sdkModel } from './sdk.js';

/**
 * Any OpenAI-compatible chat completions endpoint (Mistral, DeepSeek, a local Ollama or vLLM):
 * `POST {base}/chat/completions`, a bearer key when one is configured. `json_schema` structured
 * output by default; `json_object` for endpoints that only have JSON mode (DeepSeek). No web search:
 * its votes say `searches: null` (docs/ai.md#web-search); Sibyl's function tools still work.
 */
export function createOpenAICompatibleModel(slot: ModelSlot, deps: AdapterDeps): ResolutionModel {
  const provider = createOpenAICompatible({
    name: slot.name,
    baseURL: slot.baseUrl ?? '',
    ...(slot.apiKey ? { apiKey: slot.apiKey } : {}),
    supportsStructuredOutputs: slot.responseFormat === 'json_schema',
    fetch: deps.fetch,
  });
  return sdkModel(slot, provider.chatModel(slot.model), deps);
}
