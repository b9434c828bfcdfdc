import { AppError } from '../errors.js';
import { type PriceTarget, parseTarget } from './tokens.js';

/** A token as a request names it: how answers echo it, and what it resolves to (null: unknown symbol). */
export interface RequestedToken {
  /** Symbols upper-cased, mints as given. */
  symbol: string;
  target: PriceTarget | null;
}

/** At most this much of a bad input is echoed back in a message. */
export const ECHO_CHARS = 64;

/** How a request names the token in the answer: symbols upper-cased, mints as given. */
export function displayName(text: string): string {
  const trimmed = text.trim();
  return trimmed.length >= 32 ? trimmed : trimmed.toUpperCase();
}

/**
 * Reads a symbol or mint address. A malformed one comes back as the reason it is malformed; a
 * well-formed unknown symbol with `target: null`, for the caller to refuse with `unknownSymbol` once
 * its other checks are done (input errors come before unknown symbols).
 */
export function readToken(text: string): RequestedToken | { invalid: string } {
  const parsed = parseTarget(text);
  if (parsed.kind === 'invalid') return { invalid: parsed.reason };
  return { symbol: displayName(text), target: parsed.kind === 'target' ? parsed.target : null };
}

/** 400 INVALID_SYMBOL for the one token a request names at `path` (e.g. `path.symbolOrMint`). */
export function invalidSymbol(text: string, path: string, reason: string): AppError {
  return new AppError('INVALID_SYMBOL', `"${text.slice(0, ECHO_CHARS)}" is not a symbol or mint address`, {
    details: { problems: [{ path, message: reason }] },
  });
}

/** 404 SYMBOL_NOT_FOUND, naming the symbol as the spec's error body does. */
export function unknownSymbol(symbol: string): AppError {
  return new AppError('SYMBOL_NOT_FOUND', `Unknown symbol ${symbol}`, { extras: { symbol } });
}

/** The one token a request names at `path`, which must be well-formed and known. */
export function requireToken(text: string, path: string): { symbol: string; target: PriceTarget } {
  const token = readToken(text);
  if ('invalid' in token) throw invalidSymbol(text, path, token.invalid);
  if (!token.target) throw unknownSymbol(token.symbol);
  return { symbol: token.symbol, target: token.target };
}
