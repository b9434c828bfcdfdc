/** Prices' descriptor (src/feature.ts): their settings and routes. */
import type { Attestations } from '../attestations/index.js';
import type { Feature } from '../feature.js';
import { priceSettings } from './config.js';
import type { PriceService } from './service.js';

export interface Needs {
  ports: { prices: PriceService; attestations: Attestations };
}

export const pricesFeature: Feature<{ prices: typeof priceSettings }, Needs> = {
  name: 'prices',
  settings: { prices: priceSettings },
  async api(app, { ports }) {
    const { priceRoutes } = await import('./routes.js');
    priceRoutes(app, { prices: ports.prices, attestations: ports.attestations });
  },
};
