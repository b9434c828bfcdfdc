import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { FEES } from '../fees.js';
import { defineRoute } from '../http/route.js';
import { handlerRules, SYMBOL_OR_MINT_PATTERN, SYMBOL_OR_MINT_RULE } from '../http/schemas.js';
import { presentPrice, priceBatch } from './batch.js';
import { requireToken } from './requested.js';
import { BatchBody, BatchResult, MAX_BATCH_SYMBOLS, SinglePriceResult } from './schemas.js';
import type { PriceService } from './service.js';

export function priceRoutes(app: FastifyInstance, deps: { prices: PriceService }): void {
  const { prices } = deps;

  defineRoute(app, {
    method: 'GET',
    url: '/price/:symbolOrMint',
    operationId: 'getPrice',
    responseName: 'PriceResult',
    summary: 'Current VWAP of a token, by symbol or Solana mint',
    tags: ['prices'],
    permission: 'price',
    price: FEES.priceSingle,
    params: Type.Object({
      symbolOrMint: Type.String({
        description: `e.g. SOL, or a mint address. ${SYMBOL_OR_MINT_RULE}`,
        ...handlerRules({ pattern: SYMBOL_OR_MINT_PATTERN }),
      }),
    }),
    response: SinglePriceResult,
    errors: ['INVALID_SYMBOL', 'SYMBOL_NOT_FOUND', 'PRICE_UNAVAILABLE'],
    handler: async ({ params, principal, ctx }) => {
      const { symbol, target } = requireToken(params.symbolOrMint, 'path.symbolOrMint');
      const result = await prices.price(target, principal.mode, symbol);
      return { symbol, ...presentPrice(result, target), resolutionTimestamp: ctx.clock.now().toISOString() };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/price/batch',
    operationId: 'getPriceBatch',
    responseName: 'BatchPriceResult',
    summary: `VWAPs of up to ${MAX_BATCH_SYMBOLS} tokens in one request`,
    description:
      'Duplicates (including a symbol and its mint) collapse into one item; items come back in request order. ' +
      'A well-formed symbol that cannot be priced is an item with `error`, not a failure of the batch; a malformed ' +
      'one fails the whole request with INVALID_SYMBOL. A batch in which nothing could be priced is an error and ' +
      'costs nothing.',
    tags: ['prices'],
    permission: 'batch',
    idempotent: true,
    // 0.05 + 0.01 per distinct symbol requested, duplicates collapsed first (docs/api.md#pricing).
    price: (_input, result) => FEES.priceBatchBase + FEES.priceBatchPerSymbol * BigInt(result.prices.length),
    priceNote: '0.05 + 0.01 per distinct symbol requested',
    // A batch prices at least one symbol: what the balance must cover before any venue is asked.
    leastPrice: FEES.priceBatchBase + FEES.priceBatchPerSymbol,
    body: BatchBody,
    response: BatchResult,
    errors: ['BATCH_LIMIT_EXCEEDED', 'INVALID_SYMBOL', 'SYMBOL_NOT_FOUND', 'PRICE_UNAVAILABLE'],
    handler: async ({ body, principal, ctx }) => {
      const items = await priceBatch(prices, body.symbols, principal.mode);
      return { resolutionTimestamp: ctx.clock.now().toISOString(), prices: items };
    },
  });
}
