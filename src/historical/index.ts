/** Candle storage and historical series: the room's door. */
import type { Feature } from '../feature.js';

export { resolveRange } from './buckets.js';
export { HistoricalService } from './service.js';

export const historicalFeature: Feature = {
  name: 'historical',
  async api(app, { ports }) {
    const { historicalRoutes } = await import('./routes.js');
    historicalRoutes(app, { historical: ports.historical });
  },
};
