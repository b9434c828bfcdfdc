import type { Feature } from '../feature.js';
import { liveStreamSettings } from './config.js';

/** The live-data streams' descriptor (src/feature.ts): their settings and routes. */
export const streamsFeature: Feature<{ liveStreams: typeof liveStreamSettings }> = {
  name: 'streams',
  settings: { liveStreams: liveStreamSettings },
  async api(app, deps) {
    const { liveStreamRoutes } = await import('./routes.js');
    liveStreamRoutes(app, { ...deps, settings: deps.config.liveStreams });
  },
};
