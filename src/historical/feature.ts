/** Historical prices' descriptor (src/feature.ts): its routes. */
import type { Feature } from '../feature.js';
import type { HistoricalService } from './service.js';

export interface Needs {
  ports: { historical: HistoricalService };
}

export const historicalFeature: Feature<Record<never, never>, Needs> = {
  name: 'historical',
  tables: ['venue_candles'],
  async api(app, { ports }) {
    const { historicalRoutes } = await import('./routes.js');
    historicalRoutes(app, { historical: ports.historical });
  },
};
