import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { AppError } from '../errors.js';
import { defineRoute } from '../http/route.js';
import { PRICES } from '../pricing.js';
import { BatchBody, BatchResult, MAX_BATCH_SYMBOLS, SinglePriceResult } from './schemas.js';
import type { PriceResult, PriceService } from './service.js';
import { type PriceTarget, parseTarget } from './tokens.js';

function present(result: PriceResult, target: PriceTarget) {
  return {
    vwapPrice: result.vwapPrice,
    sources: result.sources,
    sourceCount: result.sourceCount,
    isValid: result.isValid,
    spread: result.spread,
    token: { symbol: target.token?.symbol ?? null, mint: target.mint },
    unavailableSources: result.unavailableSources,
  };
}

/** How a request names the token in the answer: symbols upper-cased, mints as given. */
export function displayName(text: string): string {
  const trimmed = text.trim();
  return trimmed.length >= 32 ? trimmed : trimmed.toUpperCase();
}

export function priceRoutes(app: FastifyInstance, deps: { prices: PriceService }): void {
  const { prices } = deps;

  defineRoute(app, {
    method: 'GET',
    url: '/price/:symbolOrMint',
    operationId: 'getPrice',
    summary: 'Current VWAP of a token, by symbol or Solana mint',
    tags: ['prices'],
    permission: 'price',
    price: PRICES.priceSingle,
    params: Type.Object({ symbolOrMint: Type.String({ description: 'e.g. SOL, or a mint address' }) }),
    response: SinglePriceResult,
    errors: ['INVALID_SYMBOL', 'SYMBOL_NOT_FOUND', 'PRICE_UNAVAILABLE'],
    handler: async ({ params, principal, ctx }) => {
      const requested = params.symbolOrMint;
      const parsed = parseTarget(requested);
      const symbol = displayName(requested);
      if (parsed.kind === 'invalid') {
        throw new AppError('INVALID_SYMBOL', `"${requested.slice(0, 64)}" is not a symbol or mint address`, {
          details: { problems: [{ path: 'path.symbolOrMint', message: parsed.reason }] },
        });
      }
      if (parsed.kind === 'unknown-symbol') {
        throw new AppError('SYMBOL_NOT_FOUND', `Unknown symbol ${symbol}`, { extras: { symbol } });
      }
      const result = await prices.price(parsed.target, principal.mode, symbol);
      return {
        symbol,
        ...present(result, parsed.target),
        resolutionTimestamp: ctx.clock.now().toISOString(),
      };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/price/batch',
    operationId: 'getPriceBatch',
    summary: `VWAPs of up to ${MAX_BATCH_SYMBOLS} tokens in one request`,
    description:
      'Duplicates (including a symbol and its mint) collapse into one item; items come back in request order. ' +
      'A well-formed symbol that cannot be priced is an item with `error`, not a failure of the batch; a malformed ' +
      'one fails the whole request with INVALID_SYMBOL. A batch in which nothing could be priced is an error and ' +
      'costs nothing.',
    tags: ['prices'],
    permission: 'batch',
    // DESIGN.md §3: 0.05 + 0.01 per distinct symbol requested (duplicates collapse first).
    price: (_input, result) =>
      PRICES.priceBatchBase + PRICES.priceBatchPerSymbol * BigInt(result.prices.length),
    priceNote: '0.05 + 0.01 per distinct symbol requested',
    body: BatchBody,
    response: BatchResult,
    errors: ['BATCH_LIMIT_EXCEEDED', 'INVALID_SYMBOL', 'SYMBOL_NOT_FOUND', 'PRICE_UNAVAILABLE'],
    handler: async ({ body, principal, ctx }) => {
      if (body.symbols.length > MAX_BATCH_SYMBOLS) {
        throw new AppError(
          'BATCH_LIMIT_EXCEEDED',
          `A batch holds at most ${MAX_BATCH_SYMBOLS} symbols (got ${body.symbols.length})`,
          { extras: { maxSymbols: MAX_BATCH_SYMBOLS } },
        );
      }
      const problems: { path: string; message: string }[] = [];
      const distinct = new Map<string, { symbol: string; target: PriceTarget | null }>();
      body.symbols.forEach((text, i) => {
        const parsed = parseTarget(text);
        if (parsed.kind === 'invalid') {
          problems.push({ path: `body.symbols[${i}]`, message: `"${text.slice(0, 64)}": ${parsed.reason}` });
          return;
        }
        const symbol = displayName(text);
        const key = parsed.kind === 'target' ? parsed.target.key : `unknown:${symbol}`;
        if (!distinct.has(key))
          distinct.set(key, { symbol, target: parsed.kind === 'target' ? parsed.target : null });
      });
      if (problems.length > 0) {
        throw new AppError('INVALID_SYMBOL', 'Some symbols are not symbols or mint addresses', {
          details: { problems },
        });
      }
      const items = await Promise.all(
        [...distinct.values()].map(async ({ symbol, target }) => {
          try {
            if (!target) throw new AppError('SYMBOL_NOT_FOUND', `Unknown symbol ${symbol}`);
            return { symbol, ...present(await prices.price(target, principal.mode, symbol), target) };
          } catch (err) {
            if (
              !(err instanceof AppError) ||
              (err.code !== 'SYMBOL_NOT_FOUND' && err.code !== 'PRICE_UNAVAILABLE')
            ) {
              throw err;
            }
            return {
              symbol,
              vwapPrice: null,
              sources: [],
              sourceCount: 0,
              isValid: false,
              unavailableSources: [],
              error: { code: err.code, message: err.message },
            };
          }
        }),
      );
      if (items.every((item) => 'error' in item)) {
        const allUnknown = items.every((item) => item.error?.code === 'SYMBOL_NOT_FOUND');
        if (allUnknown) {
          const first = items[0]?.symbol ?? '';
          throw new AppError('SYMBOL_NOT_FOUND', `None of the symbols is known (first: ${first})`, {
            extras: { symbol: first },
          });
        }
        throw new AppError(
          'PRICE_UNAVAILABLE',
          'No symbol in the batch could be priced right now; retry shortly',
        );
      }
      return { resolutionTimestamp: ctx.clock.now().toISOString(), prices: items };
    },
  });
}
