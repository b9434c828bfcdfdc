import Type from 'typebox';
import { MAX_BATCH_SYMBOLS, SinglePriceResult } from '../prices/index.js';

export const PRICE_EVENT_ID_PATTERN = '^p\\.[0-9]{1,16}\\.[0-9]{1,12}$';

export const StreamPricesQuery = Type.Object(
  {
    symbols: Type.String({
      minLength: 1,
      maxLength: 4096,
      description: `Symbols or mint addresses, comma-separated: 1 to ${MAX_BATCH_SYMBOLS}, as the batch takes them`,
      examples: ['SOL,JUP,BONK'],
    }),
  },
  { additionalProperties: false },
);

export const PriceStreamHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({
      pattern: PRICE_EVENT_ID_PATTERN,
      description:
        'The id of the last event received (EventSource sends it when it reconnects): the stream resumes with the current prices',
    }),
  ),
});

const { attestation: _attestation, ...priceProperties } = SinglePriceResult.properties;

/** `event: price`: the single price of GET /price/{symbolOrMint}, without its cost fields (nor an attestation). */
export const PriceStreamEvent = Type.Object(
  { ...priceProperties },
  {
    description:
      'The data of each `event: price`: a symbol’s current VWAP, as GET /price/{symbolOrMint} answers it without `costUsd` and `remainingBalanceUsd`',
  },
);

/** At most this many markets per stream. */
export const MAX_STREAM_MARKETS = 50;

export const MARKET_EVENT_ID_PATTERN = '^m\\.[0-9]{1,19}(\\.[0-9]{1,3})?$';

export const StreamMarketsQuery = Type.Object(
  {
    ids: Type.String({
      minLength: 1,
      maxLength: 5100,
      description: `Market ids, comma-separated: 1 to ${MAX_STREAM_MARKETS}`,
      examples: ['sol-above-200-dec,btc-100k'],
    }),
  },
  { additionalProperties: false },
);

export const MarketStreamHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({
      pattern: MARKET_EVENT_ID_PATTERN,
      description:
        'The id of the last event received (EventSource sends it when it reconnects): the events after it of the last 24 hours are sent first. `m.<n>` or `m.<n>.<k>`, n at most 9223372036854775807',
    }),
  ),
});

const Bps = (description: string) => Type.Integer({ minimum: 0, maximum: 10_000, description });

/** `event: market`: the snapshot, and each change of status, prices or probability. */
export const MarketStreamEvent = Type.Object(
  {
    requestId: Type.String({ description: 'The request that opened the stream' }),
    id: Type.String({ description: 'The market id' }),
    status: Type.String({
      description:
        'OPEN, CLOSED, RESOLVING, FINALIZED or CANCELLED: a market that turns DRAFT ends the stream with `event: error` `NOT_FOUND` instead',
    }),
    outcomes: Type.Array(
      Type.Object({
        index: Type.Integer({ minimum: 0 }),
        label: Type.String(),
        lastPrice: Type.Union([Bps('Price of the last trade, basis points'), Type.Null()]),
        probability: Type.Number({ minimum: 0, maximum: 1, description: 'As GET /markets/{id} computes it' }),
      }),
    ),
    tradingStats: Type.Object({
      totalVolume: Type.String({ description: 'Σ shares × price of every trade, lamports' }),
      totalTrades: Type.Integer({ minimum: 0 }),
    }),
    resolution: Type.Union([
      Type.Object({
        winningOutcomeIndex: Type.Integer({ minimum: 0 }),
        resolvedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      }),
      Type.Null(),
    ]),
  },
  {
    description:
      'The data of each `event: market`. `event: trade` carries `{ requestId, marketId, tradeId, outcome, price, shares, at }`; ' +
      '`event: resolved` `{ requestId, marketId, status, winningOutcomeIndex, winningOutcomeLabel, resolvedAt }` (docs/streams.md#markets)',
  },
);
