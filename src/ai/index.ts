/** AI resolution (providers, the resolver, request rows and their queue): the room's door. */
import type { Clock } from '../lib/clock.js';
import type { AiConfig } from './config.js';
import type { Resolver } from './resolver.js';
import type { SibylData } from './tools/port.js';

export {
  marketResolution,
  type ResolutionAnswer,
  requestedResolution,
  resolutionAnswer,
} from './attest.js';
export type { AiConfig } from './config.js';
export {
  type Consensus,
  consensusResult,
  DEFAULT_CONFIDENCE_THRESHOLD,
  decideConsensus,
} from './consensus.js';
export { BODY_PATHS, checkQuestion, LIMITS } from './input.js';
export { latestMarketResolution } from './latest.js';
export type { MarketQuestion, MarketSource } from './market-port.js';
export type { SlotStatus } from './providers/registry.js';
export type { Resolution, Resolver } from './resolver.js';
export { AiReadiness, EvidenceSchema } from './schemas.js';
export type { MarketFacts, SibylData } from './tools/port.js';
export type { ResolutionQuestion, Vote } from './types.js';

/**
 * The resolver of `POST /ai/resolve`, for the ports of a process and for an operator command that
 * asks the models itself (`sibyl ai evaluate`): loaded on demand, since it brings the AI SDKs
 * (docs/architecture.md, "CLI start-up stays light"). `data` gives the models Sibyl's tools.
 */
export async function loadResolver(config: AiConfig, clock: Clock, data?: SibylData): Promise<Resolver> {
  const { createResolver } = await import('./resolver.js');
  return createResolver(config, clock, data);
}
