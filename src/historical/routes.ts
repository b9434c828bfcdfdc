import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { AppError, type ValidationProblem } from '../errors.js';
import { FEES } from '../fees.js';
import { defineRoute } from '../http/route.js';
import {
  handlerRules,
  SYMBOL_OR_MINT_PATTERN,
  SYMBOL_OR_MINT_RULE,
  Timestamp,
  timestampRules,
} from '../http/schemas.js';
import { parseIsoTimestamp } from '../lib/time.js';
import {
  CANDLE_INTERVALS,
  type CandleInterval,
  invalidSymbol,
  readToken,
  UnavailableSourceSchema,
  unknownSymbol,
} from '../prices/index.js';
import { MAX_DATA_POINTS, resolveRange } from './buckets.js';
import type { HistoricalService } from './service.js';

const DEFAULT_INTERVAL: CandleInterval = '1h';

const HistoricalQuery = Type.Object(
  {
    startTime: Type.String({
      description: 'ISO 8601 with a zone, e.g. 2026-11-01T00:00:00Z; before endTime',
      ...timestampRules(),
    }),
    endTime: Type.String({
      description: 'ISO 8601 with a zone; a time after now is clamped to now',
      ...timestampRules(),
    }),
    interval: Type.Optional(
      Type.Enum(CANDLE_INTERVALS, {
        default: DEFAULT_INTERVAL,
        description:
          'Bucket size; maximum range 24 h (1m), 7 d (5m), 14 d (15m), 30 d (1h), 90 d (4h), 365 d (1d)',
      }),
    ),
  },
  { additionalProperties: false },
);

const DataPoint = Type.Object(
  {
    timestamp: Type.String({ description: 'Open time of the bucket (ISO 8601, UTC)' }),
    price: Type.Number({ description: 'Volume-weighted close of the venues’ candles for the bucket, USD' }),
    source: Type.String({ description: 'Contributing venues, comma-separated (e.g. "binance,okx")' }),
    sourceCount: Type.Integer({ description: 'Number of contributing venues' }),
    isComplete: Type.Boolean({ description: 'False for the still-open bucket (its latest close so far)' }),
  },
  { title: 'PriceHistoryPoint', additionalProperties: false },
);

const HistoricalResult = Type.Object(
  {
    symbol: Type.String({ description: 'As requested: symbols upper-cased, mints as given' }),
    interval: Type.Enum(CANDLE_INTERVALS),
    startTime: { ...Timestamp, description: 'startTime aligned down to the interval (UTC)' },
    endTime: { ...Timestamp, description: 'endTime as used: clamped to now when it was later' },
    dataPoints: Type.Array(DataPoint, {
      description: 'Oldest first; buckets no venue has a candle for are omitted',
    }),
    unavailableSources: Type.Array(UnavailableSourceSchema, {
      description: 'Venues asked during this request that gave nothing, and why',
    }),
  },
  { additionalProperties: false },
);

export function historicalRoutes(app: FastifyInstance, deps: { historical: HistoricalService }): void {
  const { historical } = deps;

  defineRoute(app, {
    method: 'GET',
    url: '/historical/price/:symbol',
    operationId: 'getHistoricalPrice',
    responseName: 'PriceHistory',
    summary: 'Price series of a token over a time range, from venue candles',
    description:
      `Buckets are UTC-aligned; the series covers buckets opening in [startTime aligned down, endTime), ` +
      `at most ${MAX_DATA_POINTS} of them. Each point combines the venues’ candles for its bucket, weighted ` +
      'by volume; buckets no venue covers are omitted. Charged on success only, also for an empty series.',
    tags: ['historical'],
    permission: 'historical',
    price: FEES.historical,
    params: Type.Object({
      symbol: Type.String({
        description: `e.g. SOL, or a mint address. ${SYMBOL_OR_MINT_RULE}`,
        ...handlerRules({ pattern: SYMBOL_OR_MINT_PATTERN }),
      }),
    }),
    querystring: HistoricalQuery,
    response: HistoricalResult,
    errors: ['INVALID_SYMBOL', 'INVALID_TIMESTAMP', 'SYMBOL_NOT_FOUND', 'PRICE_UNAVAILABLE'],
    handler: async ({ params, query, principal, ctx }) => {
      const token = readToken(params.symbol);
      if ('invalid' in token) throw invalidSymbol(params.symbol, 'path.symbol', token.invalid);
      const start = parseIsoTimestamp(query.startTime);
      const end = parseIsoTimestamp(query.endTime);
      const problems: ValidationProblem[] = [];
      const expected = 'is not an ISO 8601 timestamp with a zone (e.g. 2026-11-01T00:00:00Z)';
      if (!start) problems.push({ path: 'query.startTime', message: expected });
      if (!end) problems.push({ path: 'query.endTime', message: expected });
      if (!start || !end) {
        throw new AppError('INVALID_TIMESTAMP', problems.map((p) => `${p.path} ${p.message}`).join('; '), {
          details: { problems },
        });
      }
      // The validator does not apply schema defaults.
      const interval = query.interval ?? DEFAULT_INTERVAL;
      const range = resolveRange(start, end, interval, ctx.clock.now());
      const { symbol, target } = token;
      if (!target) throw unknownSymbol(symbol);
      const series = await historical.series({
        target,
        requested: symbol,
        range,
        mode: principal.mode,
      });
      return {
        symbol,
        interval,
        startTime: new Date(range.firstOpenMs).toISOString(),
        endTime: new Date(range.endMs).toISOString(),
        ...series,
      };
    },
  });
}
