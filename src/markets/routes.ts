import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { AppError } from '../errors.js';
import { FEES } from '../fees.js';
import { MAX_PARAM_LENGTH } from '../http/edge.js';
import { defineRoute } from '../http/route.js';
import { handlerRules, NO_NUL, NO_NUL_WORDS } from '../http/schemas.js';
import { cachedBodySerializer } from './read/cached-json.js';
import type { MarketService } from './read/service.js';
import { MarketDetail, MarketList } from './schemas.js';
import { ListQuery } from './search/query.js';

/** GET /markets and GET /markets/:id (docs/markets.md). */
export function marketRoutes(app: FastifyInstance, deps: { markets: MarketService }): void {
  const { markets } = deps;

  defineRoute(app, {
    method: 'GET',
    url: '/markets',
    operationId: 'listMarkets',
    dashboardTwin: true,
    responseName: 'MarketList',
    summary: 'Prediction markets: search, sort, filters, pages or a cursor',
    description:
      'DRAFT markets are never listed. Without `q`, `sort` or `order`: createdAt newest first, then id. `q` ' +
      'searches title, outcome labels, category and description (the last word as a prefix) and sorts by ' +
      'relevance. Ties go by id, so paging never repeats or skips a market that did not move; page by `page` ' +
      'or by `cursor` (the previous `nextCursor`), not both. A page past the end is an empty list with the ' +
      'total. Pages are kept up to 5 seconds, until a listed market changes (docs/markets.md#search-and-sort).',
    tags: ['markets'],
    permission: 'markets',
    price: FEES.marketsList,
    querystring: ListQuery,
    response: MarketList,
    handler: async ({ query }, _request, reply) => {
      const page = await markets.list(markets.plan(query));
      // A custom serialiser leaves the content type to the route.
      reply
        .type('application/json; charset=utf-8')
        .serializer(cachedBodySerializer(page, (payload) => payload.markets === page.markets));
      return page;
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/markets/:id',
    operationId: 'getMarket',
    // The dashboard's markets page reads it for a market's own address (docs/dashboard.md#market-data).
    dashboardTwin: true,
    responseName: 'MarketDetail',
    summary: 'Extended detail of one market: outcomes, orderbooks, positions, staking, statistics',
    description:
      'By id or slug. Computed at most once a minute per market and shared by every caller (`computedAt` says ' +
      'when); USD values use the SOL price of the market’s own mode (sandbox markets: the sandbox feed).',
    tags: ['markets'],
    permission: 'markets',
    price: FEES.marketDetail,
    params: Type.Object({
      // A longer path segment is 414 URI_TOO_LONG before any route runs (http/edge.ts).
      id: Type.String({
        minLength: 1,
        maxLength: MAX_PARAM_LENGTH,
        description: `Market id or slug. ${NO_NUL_WORDS}`,
        ...handlerRules(NO_NUL),
      }),
    }),
    response: MarketDetail,
    errors: ['NOT_FOUND'],
    handler: async ({ params }, _request, reply) => {
      const detail = await markets.detail(params.id);
      // A draft is not public yet: it is as unknown as a market that does not exist.
      if (!detail || detail.status === 'DRAFT') {
        throw new AppError('NOT_FOUND', `Market ${params.id.slice(0, 64)} not found`);
      }
      // A custom serialiser leaves the content type to the route.
      reply
        .type('application/json; charset=utf-8')
        .serializer(
          cachedBodySerializer(
            detail,
            (payload) => payload.id === detail.id && payload.computedAt === detail.computedAt,
          ),
        );
      return detail;
    },
  });
}
