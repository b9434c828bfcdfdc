import Type from 'typebox';
import { AttestationSchema } from '../attestations/index.js';
import { handlerRules, SYMBOL_OR_MINT_PATTERN, SYMBOL_OR_MINT_RULE, Timestamp } from '../http/schemas.js';

export const MAX_BATCH_SYMBOLS = 50;

export const PriceSource = Type.Object(
  {
    name: Type.String({ description: 'Lowercase venue identifier; sandbox venues are named sandbox-…' }),
    price: Type.Number({ description: 'USD' }),
    volume24h: Type.Number({ description: '24-hour volume in USD; 0 when the venue reports none' }),
    timestamp: Timestamp,
    used: Type.Boolean({ description: 'Whether this source is in the VWAP' }),
    status: Type.Enum(['used', 'stale', 'no_volume', 'outlier', 'reference', 'out_of_range'], {
      description:
        'used; stale (older than the maximum age); no_volume; outlier (too far from the median); ' +
        'reference (a price-only source that helps find outliers but is not weighted); out_of_range ' +
        '(price × volume beyond what a double holds: an absurd figure from the venue)',
    }),
    deviation: Type.Optional(
      Type.Number({ description: 'Relative distance from the median of fresh quotes' }),
    ),
  },
  { title: 'PriceSource', additionalProperties: false },
);

export const UnavailableSourceSchema = Type.Object(
  {
    name: Type.String(),
    reason: Type.Enum([
      'timeout',
      'network',
      'rate_limited',
      'geo_blocked',
      'http_error',
      'bad_response',
      'upstream_error',
      'circuit_open',
      'not_listed',
    ]),
    retryAt: Type.Optional(Timestamp),
  },
  {
    title: 'UnavailableSource',
    additionalProperties: false,
    examples: [{ name: 'kraken', reason: 'rate_limited', retryAt: '2026-11-23T05:16:30.000Z' }],
    description: 'A venue asked that gave no quote, and why',
  },
);

export const TokenRef = Type.Object(
  {
    symbol: Type.Union([Type.String(), Type.Null()], {
      description: 'Registry symbol, when the token is listed',
    }),
    mint: Type.Union([Type.String(), Type.Null()], { description: 'Solana mint address, when known' }),
  },
  { title: 'TokenRef', additionalProperties: false },
);

const priceFields = {
  vwapPrice: Type.Number({ description: 'Volume-weighted average price in USD' }),
  sources: Type.Array(PriceSource),
  sourceCount: Type.Integer({ description: 'Sources used in the VWAP' }),
  isValid: Type.Boolean({ description: 'At least 2 sources used and their spread within tolerance' }),
  spread: Type.Number({ description: '(max − min) / VWAP over the sources used' }),
  token: TokenRef,
  unavailableSources: Type.Array(UnavailableSourceSchema),
};

export const SinglePriceResult = Type.Object({
  symbol: Type.String({ description: 'The symbol (upper-cased) or mint as requested' }),
  ...priceFields,
  resolutionTimestamp: Timestamp,
  attestation: Type.Optional(AttestationSchema),
});

export const BatchItem = Type.Object(
  {
    symbol: Type.String(),
    vwapPrice: Type.Union([Type.Number(), Type.Null()], { description: 'null only when `error` is set' }),
    sources: Type.Array(PriceSource),
    sourceCount: Type.Integer(),
    isValid: Type.Boolean(),
    spread: Type.Optional(Type.Number()),
    token: Type.Optional(TokenRef),
    unavailableSources: Type.Array(UnavailableSourceSchema),
    error: Type.Optional(
      Type.Object({
        code: Type.Enum(['SYMBOL_NOT_FOUND', 'PRICE_UNAVAILABLE']),
        message: Type.String(),
      }),
    ),
    attestation: Type.Optional(AttestationSchema),
  },
  { title: 'BatchPriceItem', additionalProperties: false },
);

export const BatchResult = Type.Object({
  resolutionTimestamp: Timestamp,
  prices: Type.Array(BatchItem, { description: 'One item per distinct symbol, in request order' }),
});

export const BatchBody = Type.Object(
  {
    // maxItems and the pattern are the handler's: more than 50 is BATCH_LIMIT_EXCEEDED and a malformed
    // entry INVALID_SYMBOL (docs/api.md#errors), not schema errors; the body size limit bounds the array.
    symbols: Type.Array(Type.String(handlerRules({ pattern: SYMBOL_OR_MINT_PATTERN })), {
      minItems: 1,
      description: `Symbols or mint addresses, at most ${MAX_BATCH_SYMBOLS}. Each: ${SYMBOL_OR_MINT_RULE}`,
      ...handlerRules({ maxItems: MAX_BATCH_SYMBOLS }),
    }),
  },
  { title: 'BatchPriceRequest', additionalProperties: false },
);
