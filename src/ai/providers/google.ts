import { createGoogleGenerativeAI, type GoogleGenerativeAIProvider } from '@ai-sdk/google';
import type { ModelSlot } from '../config.js';
import type { ResolutionModel } from '../types.js';
import type { NativeSearch } from './grounding.js';
import { type AdapterDeps, sdkModel } from './sdk.js';

export const GOOGLE_BASE_URL = 'https://generativelanguage.googleapis.com/v1beta';

/** Gemini 1.x and 2.x: Google Search cannot share a call with function tools or JSON mode. */
export function isGeminiBefore3(model: string): boolean {
  return /^(models\/)?gemini-[12](\.|-|$)/.test(model);
}

/**
 * Gemini's Google Search grounding (`tools[{googleSearch:{}}]`; no cap). Gemini 3 takes it beside
 * function tools and the answer schema; on 1.x and 2.x the model searches in a call of its own, calls
 * Sibyl's tools in another, and answers from its notes. Searches: `webSearchQueries`; each grounding
 * chunk is a source (a Google redirect URL, titled with the domain), with no quoted text.
 */
export const googleSearch = (provider: GoogleGenerativeAIProvider, model: string): NativeSearch => ({
  tool: () => provider.tools.googleSearch({}),
  withOutput: !isGeminiBefore3(model),
  withFunctions: !isGeminiBefore3(model),
  count: (step) => {
    const grounding = step.providerMetadata?.google?.groundingMetadata as
      | { webSearchQueries?: unknown }
      | null
      | undefined;
    const queries = grounding?.webSearchQueries;
    return Array.isArray(queries) ? queries.length : 0;
  },
});

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
  return sdkModel(slot, provider(slot.model), deps, {
    search: googleSearch(provider, slot.model),
    functionsWithOutput: !isGeminiBefore3(slot.model),
  });
}
