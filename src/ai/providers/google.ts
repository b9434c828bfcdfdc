import { createGoogleGenerativeAI } from '@ai-sdk/google';
import type { ModelSlot } from '../config.js';
import type { ResolutionModel } from '../types.js';
import { type AdapterDeps, sdkModel } from './sdk.js';

export const GOOGLE_BASE_URL = 'https://generativelanguage.googleapis.com/v1beta';

/**
 * Google Gemini's Generative Language API (`POST {base}/models/{id}:generateContent`, key in
 * `x-goog-api-key`), with `responseMimeType: application/json` and the answer schema.
 */
export function createGoogleModel(slot: ModelSlot, deps: AdapterDeps): ResolutionModel {
  const provider = createGoogleGenerativeAI({
    apiKey: slot.apiKey ?? '',
    baseURL: slot.baseUrl ?? GOOGLE_BASE_URL,
    fetch: deps.fetch,
  });
  return sdkModel(slot, provider(slot.model), deps);
}
