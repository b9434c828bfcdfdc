import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import type { AccountMode } from '../../accounts/index.js';
import { queryable } from '../../context.js';
import type { Queryable } from '../../db/database.js';
import { AppError, validationError } from '../../errors.js';
import { FEES } from '../../fees.js';
import type { CursorCodec } from '../../http/cursor.js';
import { MAX_PARAM_LENGTH } from '../../http/edge.js';
import { defineRoute } from '../../http/route.js';
import { handlerRules, NO_NUL, NO_NUL_WORDS } from '../../http/schemas.js';
import { HistoryQuery, MarketHistory, planHistory, readHistory } from './history.js';
import * as sql from './sql.js';
import { MarketTrades, readTrades, TradesQuery, tradesPosition } from './trades.js';

const MarketParams = Type.Object({
  // A longer path segment is 414 URI_TOO_LONG before any route runs (http/edge.ts).
  id: Type.String({
    minLength: 1,
    maxLength: MAX_PARAM_LENGTH,
    description: `Market id or slug. ${NO_NUL_WORDS}`,
    ...handlerRules(NO_NUL),
  }),
});

interface MarketRef {
  id: string;
  status: string;
  sandbox: boolean;
  outcomes: number[];
}

/** The listed market an id or slug names, and checks the outcome asked for; a draft is not found. */
async function market(db: Queryable, idOrSlug: string, outcome: number | undefined): Promise<MarketRef> {
  const [row] = await db.query<MarketRef>(sql.MARKET_REF, [idOrSlug]);
  if (!row || row.status === 'DRAFT')
    throw new AppError('NOT_FOUND', `Market ${idOrSlug.slice(0, 64)} not found`);
  if (outcome !== undefined && !row.outcomes.includes(outcome)) {
    throw validationError([
      { path: 'query.outcome', message: `is not an outcome of the market (0–${row.outcomes.length - 1})` },
    ]);
  }
  return row;
}

/** GET /markets/:id/history and GET /markets/:id/trades (docs/markets.md#history, #trades). */
export function marketDataRoutes(
  app: FastifyInstance,
  deps: { solUsd(mode: AccountMode): Promise<number | null>; cursors: CursorCodec },
): void {
  defineRoute(app, {
    method: 'GET',
    url: '/markets/:id/history',
    operationId: 'getMarketHistory',
    dashboardTwin: true,
    responseName: 'MarketHistory',
    summary: 'Price history of one outcome: OHLC candles from its trades',
    description:
      'Buckets are UTC-aligned and cover [startTime aligned down, endTime); at most 1,000, with the range limits ' +
      'of GET /historical/price. No bucket before the outcome’s first trade; a bucket without trades carries the ' +
      'previous close with volume "0". Kept for every market, resolved ones included (docs/markets.md#history).',
    tags: ['markets'],
    permission: 'markets',
    price: FEES.marketHistory,
    params: MarketParams,
    querystring: HistoryQuery,
    response: MarketHistory,
    errors: ['NOT_FOUND', 'INVALID_TIMESTAMP'],
    handler: async ({ params, query, ctx }) => {
      const plan = planHistory(query, ctx.clock.now());
      const db = queryable(ctx);
      const ref = await market(db, params.id, plan.outcome);
      const candles = await readHistory(db, ref.id, plan);
      return {
        marketId: ref.id,
        outcome: plan.outcome,
        interval: plan.interval,
        startTime: new Date(plan.firstOpenMs).toISOString(),
        endTime: new Date(plan.endMs).toISOString(),
        candles,
      };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/markets/:id/trades',
    operationId: 'listMarketTrades',
    dashboardTwin: true,
    responseName: 'MarketTrades',
    summary: 'Latest trades of one market, newest first, paged by cursor',
    description:
      'Newest first by time, then trade id; page with `cursor` (the previous `nextCursor`), which belongs to its ' +
      'market and outcome filter (docs/markets.md#trades).',
    tags: ['markets'],
    permission: 'markets',
    price: FEES.marketTrades,
    params: MarketParams,
    querystring: TradesQuery,
    response: MarketTrades,
    errors: ['NOT_FOUND'],
    handler: async ({ params, query, ctx }) => {
      const db = queryable(ctx);
      const ref = await market(db, params.id, query.outcome);
      const after = tradesPosition(ref.id, query, deps.cursors);
      const solUsd = await deps.solUsd(ref.sandbox ? 'sandbox' : 'live');
      return readTrades(db, ref.id, query, after, solUsd, deps.cursors);
    },
  });
}
