/** Liveness and readiness: the room's door. */
import { depositReadiness } from '../deposits/index.js';
import type { Feature } from '../feature.js';

export const healthFeature: Feature = {
  name: 'health',
  async api(app, { config, db, ports }) {
    const { healthRoutes } = await import('./routes.js');
    healthRoutes(app, {
      db,
      aiModels: ports.resolver.liveStatus,
      deposits: () => depositReadiness(db, config.deposits),
    });
  },
};
