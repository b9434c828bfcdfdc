import { createAnthropic } from '@ai-sdk/anthropic';
import type { ModelSlot } from '../config.js';
import type { ResolutionModel } from '../types.js';
import { type AdapterDeps, sdkModel } from './sdk.js';

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com/v1';

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
  return sdkModel(slot, provider(slot.model), deps);
}
