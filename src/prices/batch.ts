import type { AccountMode } from '../accounts/index.js';
import { AppError, type ValidationProblem } from '../errors.js';
import { ECHO_CHARS, readToken, unknownSymbol } from './requested.js';
import { MAX_BATCH_SYMBOLS } from './schemas.js';
import type { PriceResult, PriceService } from './service.js';
import type { PriceTarget } from './tokens.js';

/** A token's price as answered: the aggregate, and which token it is. */
export function presentPrice(result: PriceResult, target: PriceTarget) {
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

/**
 * Prices up to MAX_BATCH_SYMBOLS tokens. Duplicates (a symbol and its mint included) collapse into
 * the first's item, in request order. A malformed entry fails the whole batch (INVALID_SYMBOL, every
 * one listed); a well-formed one that cannot be priced is an item with `error`; a batch in which
 * nothing could be priced is an error (SYMBOL_NOT_FOUND when none is known, else PRICE_UNAVAILABLE).
 */
export async function priceBatch(
  prices: PriceService,
  symbols: string[],
  /** The asking account: its mode, and its share of the venues' budget for mints outside the registry. */
  asker: { mode: AccountMode; accountId: string },
  /** Runs once the input is known good, before any venue is asked (the attestation check). */
  beforePricing: () => Promise<void> = () => Promise.resolve(),
) {
  if (symbols.length > MAX_BATCH_SYMBOLS) {
    throw new AppError(
      'BATCH_LIMIT_EXCEEDED',
      `A batch holds at most ${MAX_BATCH_SYMBOLS} symbols (got ${symbols.length})`,
      { extras: { maxSymbols: MAX_BATCH_SYMBOLS } },
    );
  }
  const problems: ValidationProblem[] = [];
  const distinct = new Map<string, { symbol: string; target: PriceTarget | null }>();
  symbols.forEach((text, i) => {
    const token = readToken(text);
    if ('invalid' in token) {
      problems.push({
        path: `body.symbols[${i}]`,
        message: `"${text.slice(0, ECHO_CHARS)}": ${token.invalid}`,
      });
      return;
    }
    const key = token.target ? token.target.key : `unknown:${token.symbol}`;
    if (!distinct.has(key)) distinct.set(key, token);
  });
  if (problems.length > 0) {
    throw new AppError('INVALID_SYMBOL', 'Some symbols are not symbols or mint addresses', {
      details: { problems },
    });
  }
  await beforePricing();
  const items = await Promise.all(
    [...distinct.values()].map(async ({ symbol, target }) => {
      try {
        if (!target) throw unknownSymbol(symbol);
        return {
          symbol,
          ...presentPrice(await prices.price(target, asker.mode, symbol, asker.accountId), target),
        };
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
    if (items.every((item) => item.error?.code === 'SYMBOL_NOT_FOUND')) {
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
  return items;
}
