/**
 * The markets' descriptor (src/feature.ts): their settings, routes, lifecycle queue, the fold of the
 * list's kept counts and `sibyl markets`.
 */
import type { Resolver } from '../ai/index.js';
import type { Attestations } from '../attestations/index.js';
import type { CoreConfig } from '../core-settings.js';
import type { Feature } from '../feature.js';
import type { CursorCodec } from '../http/cursor.js';
import type { PriceService } from '../prices/index.js';
import type { RetentionSettings } from '../retention/index.js';
import { type MarketsConfig, marketSettings } from './config.js';

export interface Needs {
  config: Pick<CoreConfig, 'redisUrl'> & { markets: MarketsConfig; retention: RetentionSettings };
  ports: { prices: PriceService; resolver: Resolver; attestations: Attestations };
  edge: { cursors: CursorCodec };
}

export const marketsFeature: Feature<{ markets: typeof marketSettings }, Needs> = {
  name: 'markets',
  tables: [
    'markets',
    'market_candles',
    'market_creators',
    'market_events',
    'market_list_counts',
    'market_orders',
    'market_outcome_last',
    'market_outcomes',
    'market_positions',
    'market_resolution_attestations',
    'market_search_terms',
    'market_stakes',
    'market_stream_events',
    'market_trade_totals',
    'market_traders',
    'market_trades',
  ],
  settings: { markets: marketSettings },
  async api(app, { config, db, clock, log, ports, edge }) {
    const [{ marketRoutes }, { marketAdminRoutes }, { createMarketService }, { marketDataRoutes }] =
      await Promise.all([
        import('./routes.js'),
        import('./admin-routes.js'),
        import('./wiring.js'),
        import('./series/routes.js'),
      ]);
    const { cursors } = edge;
    const markets = createMarketService({
      cursors,
      db,
      clock,
      log,
      prices: ports.prices,
      settings: config.markets,
      redisUrl: config.redisUrl,
    });
    app.addHook('onClose', () => markets.close());
    marketRoutes(app, markets);
    marketDataRoutes(app, { solUsd: (mode) => markets.markets.solUsd(mode), cursors });
    marketAdminRoutes(app, { db, settings: config.markets });
  },
  async worker({ config, db, clock, log, ports }) {
    const [{ WorkQueue }, { lifecycleQueueHandler }, { listCountsTask }] = await Promise.all([
      import('../queue/queue.js'),
      import('./lifecycle/lifecycle.js'),
      import('./search/list-counts.js'),
    ]);
    const handler = lifecycleQueueHandler({
      db,
      clock,
      log,
      prices: ports.prices,
      resolver: ports.resolver,
      settings: config.markets,
      attestations: ports.attestations,
    });
    return { queues: [new WorkQueue(handler, { db, clock, log })], tasks: [listCountsTask(db)] };
  },
  commands: {
    markets: {
      usage: [
        '  markets ingest FILE.ndjson              apply platform market events (docs/markets.md)',
        '  markets demo [--seed N]                 load the sandbox demo markets',
        '  markets resolve MARKET_ID OUTCOME       finalize a market with the winning outcome (index or label)',
      ],
      async run(io, action, args) {
        const [{ marketsCommand }, { createContext }, { systemClock }] = await Promise.all([
          import('./cli.js'),
          import('../context.js'),
          import('../lib/clock.js'),
        ]);
        return marketsCommand(createContext(await io.database(), systemClock), io.out, action, {
          ...args,
          cwd: io.cwd,
        });
      },
    },
  },
  async retention() {
    const [{ PRUNE_EVENTS }, { MARKET_STREAM_RETENTION_MS, PRUNE }] = await Promise.all([
      import('./ingest/ingest-sql.js'),
      import('./log/market-sql.js'),
    ]);
    return [
      { name: 'market_events', prune: PRUNE_EVENTS, keepMs: (c) => c.retention.marketEventsMs, busy: true },
      // Fixed by the stream's contract: `Last-Event-ID` resumes a market stream over 24 hours.
      { name: 'market_stream_events', prune: PRUNE, keepMs: () => MARKET_STREAM_RETENTION_MS },
    ];
  },
};
