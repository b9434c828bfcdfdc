/** AI resolution (providers, the resolver, request rows and their queue): the room's door. */

export { consensusResult, DEFAULT_CONFIDENCE_THRESHOLD } from './consensus.js';
export { BODY_PATHS, checkQuestion, LIMITS } from './input.js';
export type { MarketQuestion, MarketSource } from './market-port.js';
export type { SlotStatus } from './providers/registry.js';
export type { Resolver } from './resolver.js';
export { AiReadiness } from './schemas.js';
