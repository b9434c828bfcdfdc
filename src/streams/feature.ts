import type { CoreConfig } from '../core-settings.js';
import type { Feature } from '../feature.js';
import type { MeterMinutes } from '../http/event-stream/stream.js';
import type { EventStreams } from '../http/event-stream/streams.js';
import type { PriceService } from '../prices/index.js';
import { type LiveStreamSettings, liveStreamSettings } from './config.js';

export interface Needs {
  config: Pick<CoreConfig, 'port'> & { liveStreams: LiveStreamSettings };
  ports: { prices: PriceService };
  edge: { meterMinutes: MeterMinutes; streams: EventStreams };
}

/** The live-data streams' descriptor (src/feature.ts): their settings, routes and `sibyl stream`. */
export const streamsFeature: Feature<{ liveStreams: typeof liveStreamSettings }, Needs> = {
  name: 'streams',
  settings: { liveStreams: liveStreamSettings },
  async api(app, deps) {
    const { liveStreamRoutes } = await import('./routes.js');
    liveStreamRoutes(app, { ...deps, settings: deps.config.liveStreams });
  },
  commands: {
    stream: {
      usage: [
        '  stream prices SYMBOL… [--api-url URL]   live prices of a running service: a table on a terminal,',
        '                                          a line per change otherwise (SIBYL_API_KEY, SIBYL_API_URL)',
      ],
      async run(io, action, args) {
        // A client of a running service, not of its database.
        const { streamCommand } = await import('./watch-command.js');
        return streamCommand(io, action, args);
      },
    },
  },
};
