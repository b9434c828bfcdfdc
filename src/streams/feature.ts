import type { Feature } from '../feature.js';
import type { EventStreams } from '../http/event-stream/streams.js';
import type { Biller } from '../ledger/index.js';
import type { PriceService } from '../prices/index.js';
import { type LiveStreamSettings, liveStreamSettings } from './config.js';

export interface Needs {
  config: { liveStreams: LiveStreamSettings };
  ports: { prices: PriceService };
  edge: { biller: Biller; streams: EventStreams };
}

/** The live-data streams' descriptor (src/feature.ts): their settings and routes. */
export const streamsFeature: Feature<{ liveStreams: typeof liveStreamSettings }, Needs> = {
  name: 'streams',
  settings: { liveStreams: liveStreamSettings },
  async api(app, deps) {
    const { liveStreamRoutes } = await import('./routes.js');
    liveStreamRoutes(app, { ...deps, settings: deps.config.liveStreams });
  },
};
