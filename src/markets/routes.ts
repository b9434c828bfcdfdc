import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { AppError } from '../errors.js';
import { FEES } from '../fees.js';
import { MAX_PARAM_LENGTH } from '../http/edge.js';
import { defineRoute } from '../http/route.js';
import { cachedBodySerializer } from './cached-json.js';
import { MARKET_STATUSES } from './events.js';
import { MarketDetail, MarketList } from './schemas.js';
import type { MarketService } from './service.js';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;
const LISTED_STATUSES = MARKET_STATUSES.filter((s) => s !== 'DRAFT');

const ListQuery = Type.Object(
  {
    status: Type.Optional(
      Type.Enum(LISTED_STATUSES, {
        description: `One of ${LISTED_STATUSES.join(', ')}; default: all`,
      }),
    ),
    category: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        pattern: '^[^\\u0000-\\u001f\\u007f]+$',
        description: 'Exact category (case-sensitive); default: all',
      }),
    ),
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
    pageSize: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_PAGE_SIZE,
        default: DEFAULT_PAGE_SIZE,
      }),
    ),
  },
  { additionalProperties: false },
);

/** GET /markets and GET /markets/:id (docs/markets.md). */
export function marketRoutes(app: FastifyInstance, deps: { markets: MarketService }): void {
  const { markets } = deps;

  defineRoute(app, {
    method: 'GET',
    url: '/markets',
    operationId: 'listMarkets',
    responseName: 'MarketList',
    summary: 'Prediction markets, newest first, filtered by status and category',
    description:
      'DRAFT markets are never listed. Ordered by createdAt (newest first), then id; a page past the end ' +
      'is an empty list with the total. Pages are cached until a listed market changes (docs/markets.md).',
    tags: ['markets'],
    permission: 'markets',
    price: FEES.marketsList,
    querystring: ListQuery,
    response: MarketList,
    handler: async ({ query }, _request, reply) => {
      const page = await markets.list({
        status: query.status,
        category: query.category,
        // The validator does not apply schema defaults.
        page: query.page ?? 1,
        pageSize: query.pageSize ?? DEFAULT_PAGE_SIZE,
      });
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
      id: Type.String({ minLength: 1, maxLength: MAX_PARAM_LENGTH, description: 'Market id or slug' }),
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
