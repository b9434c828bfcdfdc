import { createOpenAI } from '@ai-sdk/openai';
import type { ModelSlot } from '../config.js';
import type { ResolutionModel } from '../types.js';
import { type AdapterDeps, sdkModel } from './sdk.js';

export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

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
  return sdkModel(slot, provider.responses(slot.model), deps, { openai: { store: false } });
}
