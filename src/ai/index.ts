/** AI resolution (providers, the resolver, request rows and their queue): the room's door. */
import type { Feature } from '../feature.js';
import { aiSettings } from './config.js';
import { createAiQueue } from './queue.js';

export { consensusResult, DEFAULT_CONFIDENCE_THRESHOLD } from './consensus.js';
export { BODY_PATHS, checkQuestion, LIMITS } from './input.js';
export type { MarketQuestion, MarketSource } from './market-port.js';
export type { SlotStatus } from './providers/registry.js';
export { getRecord, listRecords } from './requests.js';
export type { Resolver } from './resolver.js';
export { AiReadiness, AiRecord, AiRequestList, AiRequestListQuery } from './schemas.js';
export { PRUNE } from './sql.js';

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
