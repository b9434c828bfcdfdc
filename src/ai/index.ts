/** AI resolution (providers, the resolver, request rows and their queue): the room's door. */
import type { Feature } from '../feature.js';
import type { Clock } from '../lib/clock.js';
import type { AiConfig } from './config.js';
import { aiSettings } from './config.js';
import { createAiQueue } from './queue.js';
import type { Resolver } from './resolver.js';

export {
  type Consensus,
  consensusResult,
  DEFAULT_CONFIDENCE_THRESHOLD,
  decideConsensus,
} from './consensus.js';
export { BODY_PATHS, checkQuestion, LIMITS } from './input.js';
export type { MarketQuestion, MarketSource } from './market-port.js';
export type { SlotStatus } from './providers/registry.js';
export { getRecord, listRecords } from './requests.js';
export type { Resolver } from './resolver.js';
export { AiReadiness, AiRecord, AiRequestList, AiRequestListQuery } from './schemas.js';
export { PRUNE } from './sql.js';
export type { ResolutionQuestion, Vote } from './types.js';

/**
 * The resolver of `POST /ai/resolve`, for an operator command that asks the models itself (`sibyl ai
 * evaluate`): loaded on demand, since it brings the AI SDKs (docs/architecture.md, "CLI start-up
 * stays light").
 */
export async function loadResolver(config: AiConfig, clock: Clock): Promise<Resolver> {
  const { createResolver } = await import('./resolver.js');
  return createResolver(config, clock);
}

export const aiFeature: Feature<{ ai: typeof aiSettings }> = {
  name: 'ai',
  settings: { ai: aiSettings },
  async api(app, { config, ports }) {
    const { aiRoutes } = await import('./routes.js');
    aiRoutes(app, {
      resolver: ports.resolver,
      callbacks: ports.callbacks,
      markets: ports.markets,
      maxConcurrentSubmits: config.ai.submitConcurrency,
    });
  },
  worker: ({ config, db, clock, log, ports }) => ({
    queues: [
      createAiQueue({
        db,
        clock,
        log,
        resolver: ports.resolver,
        callbacks: ports.callbacks,
        config: config.ai,
      }),
    ],
  }),
};
