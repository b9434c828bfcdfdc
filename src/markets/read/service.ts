import type { AccountMode } from '../../accounts/index.js';
import { latestMarketResolution } from '../../ai/index.js';
import { type Context, createContext } from '../../context.js';
import type { Database } from '../../db/database.js';
import { AppError } from '../../errors.js';
import type { CursorCodec } from '../../http/cursor.js';
import type { Clock } from '../../lib/clock.js';
import { type PriceService, parseTarget } from '../../prices/index.js';
import type { AiPredictionBody, MarketDetailBody, MarketListBody, PriceFeedBody } from '../schemas.js';
import { readList } from '../search/list.js';
import { type ListPlan, type ListQueryInput, parseListQuery } from '../search/query.js';
import { DETAIL_TTL_MS, DetailCache } from './cache.js';
import {
  assembleDetail,
  type CountRow,
  type CuratorRow,
  type DetailPrices,
  type LevelRow,
  type MarketRow,
  type PositionRow,
  type TradeRow,
} from './detail.js';
import type { ListCache } from './list-cache.js';
import type { SharedDetailStore } from './shared-cache.js';
import * as sql from './sql.js';

const DAY_MS = 86_400_000;

/**
 * The latest AI consensus about an AI market, for `prediction.aiPrediction`: the newer of the last
 * completed `POST /ai/resolve { marketId }` and the lifecycle's automatic resolution.
 */
export async function latestAiPrediction(ctx: Context, market: MarketRow): Promise<AiPredictionBody | null> {
  if (market.resolution_type !== 'AI') return null;
  const requested = await latestMarketResolution(ctx, market.id);
  const candidates: AiPredictionBody[] = [];
  if (requested) candidates.push(prediction(requested.result, requested.completedAt.toISOString()));
  const auto = (market.resolution_details?.autoResolution ?? null) as Record<string, unknown> | null;
  const consensus = auto?.consensus as Record<string, unknown> | undefined;
  if (consensus && typeof auto?.at === 'string') candidates.push(prediction(consensus, auto.at));
  return candidates.sort((a, b) => Date.parse(b.updatedAt) - Date.parse(a.updatedAt))[0] ?? null;
}

function prediction(source: Record<string, unknown>, updatedAt: string): AiPredictionBody {
  return {
    winningOutcomeIndex: typeof source.winningOutcomeIndex === 'number' ? source.winningOutcomeIndex : null,
    confidence: Number(source.confidence ?? 0),
    agreement: Number(source.agreement ?? 0),
    canDetermine: source.canDetermine === true,
    updatedAt,
  };
}

/**
 * Market list and detail (docs/markets.md). The detail is cached a minute per market and shared by
 * every caller; its USD values and the price-feed VWAP come from the price service in the market's
 * own mode (sandbox markets from the sandbox feed), whoever asks.
 */
export class MarketService {
  private readonly cache: DetailCache<MarketDetailBody>;

  constructor(
    private readonly deps: {
      db: Database;
      clock: Clock;
      prices: PriceService;
      bookDepth: number;
      /** Makes and reads the list's cursors. */
      cursors: CursorCodec;
      /** Details shared with the other API instances (Redis); absent: this instance's own cache only. */
      shared?: SharedDetailStore<MarketDetailBody> | undefined;
      /** List pages kept until the list changes; absent: every list request reads the database. */
      list?: ListCache<MarketListBody> | undefined;
      /** The list's `total` per filter set, kept until the list changes; absent: counted per page. */
      totals?: ListCache<number> | undefined;
    },
  ) {
    this.cache = new DetailCache(
      (idOrSlug) => this.computeDetail(idOrSlug),
      deps.clock,
      DETAIL_TTL_MS,
      undefined,
      deps.shared,
    );
  }

  /** The detail of a market by id or slug, at most a minute old; null when there is none. */
  detail(idOrSlug: string): Promise<MarketDetailBody | null> {
    return this.cache.get(idOrSlug);
  }

  /** The detail computed now from the database, bypassing the cache. */
  async computeDetail(idOrSlug: string): Promise<MarketDetailBody | null> {
    const { db, clock, bookDepth } = this.deps;
    const now = clock.now();
    const [market] = await db.query<MarketRow>(sql.MARKET, [idOrSlug]);
    if (!market) return null;
    const id = market.id;
    const since = new Date(now.getTime() - DAY_MS);
    const [levels, positions, trades, lastPrices, counts, curators, prices] = await Promise.all([
      db.query<LevelRow>(sql.BOOK, [id, bookDepth]),
      db.query<PositionRow>(sql.POSITIONS, [id]),
      db.query<TradeRow>(sql.TRADES, [id, since.toISOString()]),
      db.query<{ outcome_index: number; price: number | null }>(sql.LAST_PRICES, [id]),
      db.query<CountRow>(sql.COUNTS, [id]),
      db.query<CuratorRow>(sql.TOP_CURATORS, [id]),
      this.prices(market, now),
    ]);
    const rows = {
      market,
      levels,
      positions,
      trades: trades[0] as TradeRow,
      lastPrices,
      counts: counts[0] as CountRow,
      curators,
    };
    return assembleDetail(rows, prices, now);
  }

  private async prices(market: MarketRow, now: Date): Promise<DetailPrices> {
    const mode: AccountMode = market.sandbox ? 'sandbox' : 'live';
    const [sol, feed, aiPrediction] = await Promise.all([
      this.vwap('SOL', mode),
      market.price_symbol === null ? null : this.vwap(market.price_symbol, mode),
      latestAiPrediction(createContext(this.deps.db, this.deps.clock), market),
    ]);
    let priceFeed: PriceFeedBody | null = null;
    if (market.resolution_type === 'PRICE_FEED' && market.price_symbol !== null) {
      priceFeed = {
        currentPrice: feed?.price ?? null,
        isValid: feed?.isValid ?? false,
        targetPrice: market.price_target ?? 0,
        condition: market.price_condition ?? 'above',
        symbol: market.price_symbol,
        tolerance: market.price_tolerance ?? 0,
        lastUpdated: feed ? now.toISOString() : null,
      };
    }
    return { solUsd: sol?.price ?? null, priceFeed, aiPrediction };
  }

  /** The SOL price in USD of a mode now (sandbox markets: the sandbox feed); null when there is none. */
  async solUsd(mode: AccountMode): Promise<number | null> {
    return (await this.vwap('SOL', mode))?.price ?? null;
  }

  /** A token's VWAP, or null when it cannot be priced now: a detail never fails for want of a price. */
  private async vwap(symbol: string, mode: AccountMode): Promise<{ price: number; isValid: boolean } | null> {
    const parsed = parseTarget(symbol);
    if (parsed.kind !== 'target') return null;
    try {
      const result = await this.deps.prices.price(parsed.target, mode, symbol);
      return { price: result.vwapPrice, isValid: result.isValid };
    } catch (err) {
      if (err instanceof AppError) return null; // SYMBOL_NOT_FOUND, PRICE_UNAVAILABLE
      throw err;
    }
  }

  /** The query of a list page, its cursor checked (400 VALIDATION_ERROR when it is not one of ours). */
  plan(query: ListQueryInput): ListPlan {
    return parseListQuery(query, this.deps.cursors);
  }

  /** A page of the list, from this instance's list cache when it is on (see ListCache). */
  list(plan: ListPlan): Promise<MarketListBody> {
    const { list } = this.deps;
    if (!list) return this.readList(plan);
    const key = `${plan.fingerprint}\u0000${plan.page ?? ''}\u0000${plan.after ? `${plan.after.key}\u0000${plan.after.id}` : ''}\u0000${plan.pageSize}`;
    return list.get(key, () => this.readList(plan));
  }

  /** A page of the list read from the database now. */
  private readList(plan: ListPlan): Promise<MarketListBody> {
    return readList(
      {
        db: this.deps.db,
        now: this.deps.clock.now(),
        cursors: this.deps.cursors,
        solUsd: (mode) => this.solUsd(mode),
        totals: this.deps.totals,
      },
      plan,
    );
  }
}
