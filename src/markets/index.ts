/** Prediction-market data (ingestion, the list and detail caches, lifecycle, demo data): the room's door. */
import { createContext } from '../context.js';
import type { Feature } from '../feature.js';
import { systemClock } from '../lib/clock.js';
import { WorkQueue } from '../queue/queue.js';
import { marketsCommand } from './cli.js';
import { marketSettings } from './config.js';
import { lifecycleQueueHandler } from './lifecycle.js';

export { loadDemoMarkets } from './demo.js';
export { PRUNE_EVENTS } from './ingest-sql.js';
export { marketSource } from './market-source.js';

export const marketsFeature: Feature<{ markets: typeof marketSettings }> = {
  name: 'markets',
  settings: { markets: marketSettings },
  async api(app, { config, db, clock, log, ports }) {
    const [{ marketRoutes }, { marketAdminRoutes }, { createMarketService }] = await Promise.all([
      import('./routes.js'),
      import('./admin-routes.js'),
      import('./wiring.js'),
    ]);
    const markets = createMarketService({
      db,
      clock,
      log,
      prices: ports.prices,
      settings: config.markets,
      redisUrl: config.redisUrl,
    });
    app.addHook('onClose', () => markets.close());
    marketRoutes(app, markets);
    marketAdminRoutes(app, { db, settings: config.markets });
  },
  worker: ({ config, db, clock, log, ports }) => ({
    queues: [
      new WorkQueue(
        lifecycleQueueHandler({
          db,
          clock,
          log,
          prices: ports.prices,
          resolver: ports.resolver,
          settings: config.markets,
        }),
        { db, clock, log },
      ),
    ],
  }),
  commands: {
    markets: {
      usage: [
        '  markets ingest FILE.ndjson              apply platform market events (docs/markets.md)',
        '  markets demo [--seed N]                 load the sandbox demo markets',
        '  markets resolve MARKET_ID OUTCOME       finalize a market with the winning outcome (index or label)',
      ],
      run: async (io, action, args) =>
        marketsCommand(createContext(await io.database(), systemClock), io.out, action, {
          ...args,
          cwd: io.cwd,
        }),
    },
  },
};
