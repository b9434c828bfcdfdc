import { createXai } from '@ai-sdk/xai';
import type { ModelSlot } from '../config.js';
import type { ResolutionModel } from '../types.js';
import { type AdapterDeps, sdkModel } from './sdk.js';

export const XAI_BASE_URL = 'https://api.x.ai/v1';

/** xAI's Grok through its OpenAI-compatible chat completions (`POST {base}/chat/completions`). */
export function createXaiModel(slot: ModelSlot, deps: AdapterDeps): ResolutionModel {
  const provider = createXai({
    apiKey: slot.apiKey ?? '',
    baseURL: slot.baseUrl ?? XAI_BASE_URL,
    fetch: deps.fetch,
  });
  return sdkModel(slot, provider.chat(slot.model), deps);
}
