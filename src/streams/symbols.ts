import { AppError, type ValidationProblem } from '../errors.js';
import { MAX_BATCH_SYMBOLS, readToken, unknownSymbol } from '../prices/index.js';
import type { StreamedToken } from './price-feed.js';

/** At most this much of a bad entry is echoed back. */
const ECHO = 64;

/**
 * The `symbols` of a price stream (docs/streams.md#prices), read as the batch reads its list: 1 to 50
 * comma-separated symbols or mints (more: 400 BATCH_LIMIT_EXCEEDED), a malformed one refuses the
 * whole request (400 INVALID_SYMBOL, every one listed), duplicates (a symbol and its mint included)
 * collapse into the first. A symbol the registry does not know is refused too (404
 * SYMBOL_NOT_FOUND): no source will ever price it, so a stream of it would only cost. All of it
 * before anything is taken or charged.
 */
export function streamedTokens(text: string): StreamedToken[] {
  const entries = text.split(',').map((entry) => entry.trim());
  if (entries.length > MAX_BATCH_SYMBOLS) {
    throw new AppError(
      'BATCH_LIMIT_EXCEEDED',
      `A price stream takes at most ${MAX_BATCH_SYMBOLS} symbols (got ${entries.length})`,
      { extras: { maxSymbols: MAX_BATCH_SYMBOLS } },
    );
  }
  const problems: ValidationProblem[] = [];
  const distinct = new Map<string, StreamedToken>();
  const unknown: string[] = [];
  entries.forEach((entry, i) => {
    const token = readToken(entry);
    if ('invalid' in token) {
      problems.push({ path: `query.symbols[${i}]`, message: `"${entry.slice(0, ECHO)}": ${token.invalid}` });
      return;
    }
    if (!token.target) {
      unknown.push(token.symbol);
      return;
    }
    if (!distinct.has(token.target.key))
      distinct.set(token.target.key, { symbol: token.symbol, target: token.target });
  });
  if (problems.length > 0)
    throw new AppError('INVALID_SYMBOL', 'Some symbols are not symbols or mint addresses', {
      details: { problems },
    });
  const [first] = unknown;
  if (first !== undefined) throw unknownSymbol(first);
  return [...distinct.values()];
}
