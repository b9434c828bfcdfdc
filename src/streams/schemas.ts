import Type from 'typebox';
import { handlerRules, SYMBOL_OR_MINT_PATTERN, SYMBOL_OR_MINT_RULE } from '../http/schemas.js';
import { MAX_BATCH_SYMBOLS, SinglePriceResult } from '../prices/index.js';

/** As ingestion takes market ids (docs/markets.md): letters, digits and `_.:-`, at most 100. */
export const MARKET_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$';
/**
 * A comma-separated list of 1 to `max` entries of `entry` (an anchored pattern), spaces around each
 * allowed: what the handler reads. As a pattern of the OpenAPI document, enforced by the handler
 * (`handlerRules`), so that its refusals keep their codes (BATCH_LIMIT_EXCEEDED, INVALID_SYMBOL).
 * ASCII only: the longest such list, percent-encoded, stays far below the 16 KiB of a request line.
 */
export function listPattern(entry: string, max: number): string {
  const one = ` *(?:${entry.slice(1, -1)}) *`;
  return `^${one}(?:,${one}){0,${max - 1}}$`;
}

export const PRICE_EVENT_ID_PATTERN = '^p\\.[0-9]{1,16}\\.[0-9]{1,12}$';

export const StreamPricesQuery = Type.Object(
  {
    symbols: Type.String({
      minLength: 1,
      maxLength: 4096,
      description:
        `Symbols or mint addresses, comma-separated: 1 to ${MAX_BATCH_SYMBOLS}, as the batch takes them ` +
        `(more: 400 BATCH_LIMIT_EXCEEDED). Each: ${SYMBOL_OR_MINT_RULE}`,
      examples: ['SOL,JUP,BONK'],
      ...handlerRules({ pattern: listPattern(SYMBOL_OR_MINT_PATTERN, MAX_BATCH_SYMBOLS) }),
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
      description: `Market ids (letters, digits and \`_.:-\`, at most 100 characters), comma-separated: 1 to ${MAX_STREAM_MARKETS}`,
      examples: ['sol-above-200-dec,btc-100k'],
      ...handlerRules({ pattern: listPattern(MARKET_ID_PATTERN, MAX_STREAM_MARKETS) }),
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
