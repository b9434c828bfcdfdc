import type { Database } from '../db/database.js';
import type { CursorCodec } from '../http/cursor.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../logger.js';
import type { PriceService } from '../prices/index.js';
import type { MarketsConfig } from './config.js';
import { ListCache } from './read/list-cache.js';
import { MarketService } from './read/service.js';
import { RedisDetailStore } from './read/shared-cache.js';
import type { MarketDetailBody, MarketListBody } from './schemas.js';

/**
 * The market service as the API runs it: the list cache (cleared by the database's notifications)
 * and, with REDIS_URL, the detail cache shared by every instance. `close` stops both.
 */
export function createMarketService(deps: {
  db: Database;
  clock: Clock;
  log: Log;
  prices: PriceService;
  settings: MarketsConfig;
  cursors: CursorCodec;
  /** Set: the detail cache is shared by every API instance through this Redis. */
  redisUrl?: string | undefined;
}): { markets: MarketService; close(): Promise<void> } {
  const { db, clock, log, prices, settings } = deps;
  const shared = deps.redisUrl
    ? new RedisDetailStore<MarketDetailBody>(
        deps.redisUrl,
        log,
        settings.detailCachePrefix,
        settings.detailCacheTimeoutMs,
      )
    : undefined;
  const list = new ListCache<MarketListBody>({
    db,
    clock,
    log,
    enabled: settings.listCache,
  });
  const totals = new ListCache<number>({ db, clock, log, enabled: settings.listCache });
  return {
    markets: new MarketService({
      db,
      clock,
      prices,
      bookDepth: settings.bookDepth,
      cursors: deps.cursors,
      shared,
      list,
      totals,
    }),
    async close() {
      await shared?.close();
      await list.close();
      await totals.close();
    },
  };
}
