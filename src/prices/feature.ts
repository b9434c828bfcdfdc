/** Prices' descriptor (src/feature.ts): their settings and routes. */
import type { Feature } from '../feature.js';
import { priceSettings } from './config.js';
import type { PriceService } from './service.js';

export interface Needs {
  ports: { prices: PriceService };
}

export const pricesFeature: Feature<{ prices: typeof priceSettings }, Needs> = {
  name: 'prices',
  settings: { prices: priceSettings },
  async api(app, { ports }) {
    const { priceRoutes } = await import('./routes.js');
    priceRoutes(app, { prices: ports.prices });
  },
};
