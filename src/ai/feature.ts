/** AI resolution's descriptor (src/feature.ts): its settings, routes and queue. */
import type { Attestations } from '../attestations/index.js';
import type { Feature } from '../feature.js';
import type { RetentionSettings } from '../retention/index.js';
import type { CallbackOutbox } from '../webhooks/index.js';
import { type AiConfig, aiSettings } from './config.js';
import type { MarketSource } from './market-port.js';
import type { Resolver } from './resolver.js';

export interface Needs {
  config: { ai: AiConfig; retention: RetentionSettings };
  ports: { resolver: Resolver; callbacks: CallbackOutbox; markets: MarketSource; attestations: Attestations };
}

export const aiFeature: Feature<{ ai: typeof aiSettings }, Needs> = {
  name: 'ai',
  tables: ['ai_requests', 'ai_votes'],
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
  async worker({ config, db, clock, log, ports }) {
    const { createAiQueue } = await import('./queue.js');
    return {
      queues: [
        createAiQueue({
          db,
          clock,
          log,
          resolver: ports.resolver,
          callbacks: ports.callbacks,
          config: config.ai,
          attestations: ports.attestations,
        }),
      ],
    };
  },
  async retention() {
    const { PRUNE } = await import('./sql.js');
    return [{ name: 'ai_requests', prune: PRUNE, keepMs: (c) => c.retention.aiRequestsMs, busy: true }];
  },
};
