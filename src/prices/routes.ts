import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { type Attestations, requireAttestations } from '../attestations/index.js';
import { FEES } from '../fees.js';
import { defineRoute } from '../http/route.js';
import { handlerRules, SYMBOL_OR_MINT_PATTERN, SYMBOL_OR_MINT_RULE } from '../http/schemas.js';
import { AttestQuery, signPrice } from './attest.js';
import { presentPrice, priceBatch } from './batch.js';
import { requireToken } from './requested.js';
import { BatchBody, BatchResult, MAX_BATCH_SYMBOLS, SinglePriceResult } from './schemas.js';
import type { PriceService } from './service.js';

export function priceRoutes(
  app: FastifyInstance,
  deps: { prices: PriceService; attestations: Attestations },
): void {
  const { prices, attestations } = deps;
  const attested = (query: { attest?: string }) => query.attest === 'true';

  defineRoute(app, {
    method: 'GET',
    url: '/price/:symbolOrMint',
    operationId: 'getPrice',
    responseName: 'PriceResult',
    summary: 'Current VWAP of a token, by symbol or Solana mint',
    tags: ['prices'],
    permission: 'price',
    // docs/api.md#pricing: 0.01, and 0.005 more when the answer is signed (docs/attestations.md#prices).
    price: ({ query }) => FEES.priceSingle + (attested(query) ? FEES.attestationPerSymbol : 0n),
    priceNote: '0.01; 0.015 with attest=true',
    leastPrice: FEES.priceSingle,
    params: Type.Object({
      symbolOrMint: Type.String({
        description: `e.g. SOL, or a mint address. ${SYMBOL_OR_MINT_RULE}`,
        ...handlerRules({ pattern: SYMBOL_OR_MINT_PATTERN }),
      }),
    }),
    querystring: AttestQuery,
    response: SinglePriceResult,
    errors: ['INVALID_SYMBOL', 'SYMBOL_NOT_FOUND', 'PRICE_UNAVAILABLE', 'ATTESTATION_UNAVAILABLE'],
    handler: async ({ params, query, principal, ctx, requestId }) => {
      const { symbol, target } = requireToken(params.symbolOrMint, 'path.symbolOrMint');
      const attest = attested(query);
      if (attest) await requireAttestations(attestations);
      const result = await prices.price(target, principal.mode, symbol, principal.accountId);
      const now = ctx.clock.now();
      const answer = { symbol, ...presentPrice(result, target), resolutionTimestamp: now.toISOString() };
      if (!attest) return answer;
      const signed = { requestId, mode: principal.mode, timeMs: now.getTime() };
      return { ...answer, attestation: await signPrice(attestations, signed, answer) };
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
    // 0.05 + 0.01 per distinct symbol requested, duplicates collapsed first (docs/api.md#pricing);
    // with attest=true, 0.005 more per symbol signed (docs/attestations.md#prices).
    price: (_input, result) =>
      FEES.priceBatchBase +
      FEES.priceBatchPerSymbol * BigInt(result.prices.length) +
      FEES.attestationPerSymbol * BigInt(result.prices.filter((item) => item.attestation).length),
    priceNote: '0.05 + 0.01 per distinct symbol requested; with attest=true, + 0.005 per priced symbol',
    // A batch prices at least one symbol: what the balance must cover before any venue is asked.
    leastPrice: FEES.priceBatchBase + FEES.priceBatchPerSymbol,
    querystring: AttestQuery,
    body: BatchBody,
    response: BatchResult,
    errors: [
      'BATCH_LIMIT_EXCEEDED',
      'INVALID_SYMBOL',
      'SYMBOL_NOT_FOUND',
      'PRICE_UNAVAILABLE',
      'ATTESTATION_UNAVAILABLE',
    ],
    handler: async ({ body, query, principal, ctx, requestId }) => {
      const attest = attested(query);
      // Bad input first (priceBatch checks it before asking any venue), then whether this service signs.
      const items = await priceBatch(prices, body.symbols, principal, () =>
        attest ? requireAttestations(attestations) : Promise.resolve(),
      );
      const now = ctx.clock.now();
      const answer = { resolutionTimestamp: now.toISOString(), prices: items };
      if (!attest) return answer;
      const signed = { requestId, mode: principal.mode, timeMs: now.getTime() };
      const signedItems = await Promise.all(
        items.map(async (item) =>
          item.vwapPrice === null
            ? item
            : {
                ...item,
                attestation: await signPrice(attestations, signed, { ...item, vwapPrice: item.vwapPrice }),
              },
        ),
      );
      return { ...answer, prices: signedItems };
    },
  });
}
