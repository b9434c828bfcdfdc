/** Liveness and readiness's descriptor (src/feature.ts): its routes. */
import type { Resolver } from '../ai/index.js';
import { createContext } from '../context.js';
import type { DepositConfig } from '../deposits/index.js';
import type { Feature } from '../feature.js';

export interface Needs {
  config: { deposits: DepositConfig };
  ports: { resolver: Pick<Resolver, 'liveStatus'> };
}

export const healthFeature: Feature<Record<never, never>, Needs> = {
  name: 'health',
  async api(app, { config, db, clock, ports }) {
    const [{ healthRoutes }, { depositReadiness }] = await Promise.all([
      import('./routes.js'),
      import('../deposits/index.js'),
    ]);
    const ctx = createContext(db, clock); // the probe's: no principal, never in a transaction
    healthRoutes(app, {
      db,
      aiModels: ports.resolver.liveStatus,
      deposits: () => depositReadiness(ctx, config.deposits),
    });
  },
};
