import type { SandboxVenueName } from '../types.js';

/**
 * The sandbox price feed: a pure function of (symbol, venue, time), so the same request at the
 * same moment always gets the same answer, and history (docs/prices.md#historical-prices) is consistent
 * with the spot feed. Prices wander smoothly around plausible levels; each venue sits a hair off
 * the others; about one minute in ten, sandbox-gamma is 6% off and gets dropped as an outlier.
 */
interface SandboxToken {
  price: number;
  /** 24h USD volume across all three simulated venues. */
  volume: number;
  /** Relative size of the price swings (stablecoins barely move). */
  swing: number;
}

export const SANDBOX_TOKENS: Readonly<Record<string, SandboxToken>> = {
  SOL: { price: 150, volume: 2.5e9, swing: 1 },
  BTC: { price: 95_000, volume: 2.8e10, swing: 0.6 },
  ETH: { price: 3_500, volume: 1.4e10, swing: 0.8 },
  USDC: { price: 1, volume: 6e9, swing: 0.005 },
  USDT: { price: 1, volume: 4e10, swing: 0.005 },
  BONK: { price: 0.000022, volume: 2.2e8, swing: 2 },
  JUP: { price: 0.82, volume: 9e7, swing: 1.5 },
  RAY: { price: 2.4, volume: 6e7, swing: 1.5 },
  ORCA: { price: 3.1, volume: 1.2e7, swing: 1.5 },
  PYTH: { price: 0.36, volume: 5e7, swing: 1.5 },
};

const VENUE_SHARE: Record<SandboxVenueName, number> = {
  'sandbox-alpha': 0.5,
  'sandbox-beta': 0.3,
  'sandbox-gamma': 0.2,
};

/** Quotes refresh every 10 seconds; a quote is stamped with the start of its 10-second tick. */
export const SANDBOX_TICK_MS = 10_000;
const OUTLIER_WINDOW_MS = 60_000;
const OUTLIER_SHIFT = 0.06;

/** FNV-1a over the text, scaled to [0, 1). */
function unit(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) / 2 ** 32;
}

const TAU = 2 * Math.PI;

/** The underlying market price of a sandbox token at `timeMs`, before any venue's offset. */
export function sandboxMidPrice(symbol: string, timeMs: number): number {
  const token = SANDBOX_TOKENS[symbol];
  if (!token) throw new Error(`no sandbox token ${symbol}`);
  const phase = unit(`phase:${symbol}`) * TAU;
  const wave =
    0.04 * Math.sin((TAU * timeMs) / (6 * 3_600_000) + phase) +
    0.015 * Math.sin((TAU * timeMs) / (47 * 60_000) + 2 * phase) +
    0.004 * Math.sin((TAU * timeMs) / (5 * 60_000) + 3 * phase);
  return token.price * (1 + wave * token.swing);
}

/** Whether sandbox-gamma is deliberately off for this symbol at this time. */
export function isSandboxOutlierWindow(symbol: string, timeMs: number): boolean {
  return unit(`outlier:${symbol}:${Math.floor(timeMs / OUTLIER_WINDOW_MS)}`) < 0.1;
}

export interface SandboxQuote {
  price: number;
  volume24hUsd: number;
  timestamp: Date;
}

export function sandboxQuote(symbol: string, venue: SandboxVenueName, timeMs: number): SandboxQuote {
  const token = SANDBOX_TOKENS[symbol];
  if (!token) throw new Error(`no sandbox token ${symbol}`);
  const tick = Math.floor(timeMs / SANDBOX_TICK_MS) * SANDBOX_TICK_MS;
  const offset = (unit(`offset:${venue}:${symbol}:${tick}`) - 0.5) * 0.002 * Math.max(token.swing, 0.1);
  let price = sandboxMidPrice(symbol, tick) * (1 + offset);
  if (venue === 'sandbox-gamma' && isSandboxOutlierWindow(symbol, tick)) {
    price *= unit(`direction:${symbol}:${tick}`) < 0.5 ? 1 - OUTLIER_SHIFT : 1 + OUTLIER_SHIFT;
  }
  const daily = 1 + 0.25 * Math.sin((TAU * tick) / 86_400_000 + unit(`volume:${symbol}`) * TAU);
  return {
    price: Number(price.toPrecision(10)),
    volume24hUsd: Math.round(token.volume * VENUE_SHARE[venue] * daily),
    timestamp: new Date(tick),
  };
}
