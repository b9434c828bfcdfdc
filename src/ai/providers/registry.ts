import type { Clock } from '../../lib/clock.js';
import type { ModelSlot } from '../config.js';
import type { ProviderKind, ResolutionModel } from '../types.js';
import { createAnthropicModel } from './anthropic.js';
import { noRedirectFetch } from './fetch.js';
import { createGoogleModel } from './google.js';
import { createOpenAIModel } from './openai.js';
import { createOpenAICompatibleModel } from './openai-compatible.js';
import type { AdapterDeps } from './sdk.js';
import { createXaiModel } from './xai.js';

interface Registration {
  create: (slot: ModelSlot, deps: AdapterDeps) => ResolutionModel;
  /** Why a slot of this kind cannot run with these settings, if it cannot. */
  unusable: (slot: ModelSlot) => string | null;
}

const needsKey = (slot: ModelSlot) => (slot.apiKey ? null : `AI_MODEL_${slot.slot}_API_KEY is not set`);

/**
 * Every provider kind, keyed by the closed union: adding a kind to PROVIDER_KINDS without wiring it
 * here does not compile.
 */
const REGISTRY: { [K in ProviderKind]: Registration } = {
  openai: { create: createOpenAIModel, unusable: needsKey },
  anthropic: { create: createAnthropicModel, unusable: needsKey },
  google: { create: createGoogleModel, unusable: needsKey },
  xai: { create: createXaiModel, unusable: needsKey },
  // A local Ollama or vLLM needs no key, but there is no default host to send questions to.
  'openai-compatible': {
    create: createOpenAICompatibleModel,
    unusable: (slot) => (slot.baseUrl ? null : `AI_MODEL_${slot.slot}_BASE_URL is not set`),
  },
};

/** One slot as /readyz and the AI_UNAVAILABLE answer describe it: never its key or host. */
export interface SlotStatus {
  slot: number;
  /** `<provider>/<model>`. */
  model: string;
  configured: boolean;
  reason?: string;
}

export interface LiveModels {
  /** The slots' models, in slot order; null where a slot is not usable. */
  models: (ResolutionModel | null)[];
  status: SlotStatus[];
}

/** Builds the live model of every slot that can run, and says why the others cannot. */
export function createLiveModels(slots: readonly ModelSlot[], clock: Clock): LiveModels {
  const deps: AdapterDeps = { fetch: noRedirectFetch, clock };
  const models: (ResolutionModel | null)[] = [];
  const status: SlotStatus[] = [];
  for (const slot of slots) {
    const registration = REGISTRY[slot.provider];
    const reason = slot.model ? registration.unusable(slot) : `AI_MODEL_${slot.slot}_ID is not set`;
    const model = `${slot.name}/${slot.model}`;
    if (reason) {
      models.push(null);
      status.push({ slot: slot.slot, model, configured: false, reason });
    } else {
      models.push(registration.create(slot, deps));
      status.push({ slot: slot.slot, model, configured: true });
    }
  }
  return { models, status };
}
