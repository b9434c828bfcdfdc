import type { PriceTarget } from './tokens.js';

export const LIVE_VENUES = [
  'binance',
  'coinbase',
  'kraken',
  'okx',
  'coingecko',
  'jupiter',
  'dexscreener',
  'pyth',
] as const;
export type LiveVenueName = (typeof LIVE_VENUES)[number];

export const SANDBOX_VENUES = ['sandbox-alpha', 'sandbox-beta', 'sandbox-gamma'] as const;
export type SandboxVenueName = (typeof SANDBOX_VENUES)[number];

export type VenueName = LiveVenueName | SandboxVenueName;

/** One venue's answer for one token. */
export interface VenueQuote {
  /** USD per token. */
  price: number;
  /** 24-hour traded volume in USD; null when the venue does not report one. */
  volume24hUsd: number | null;
  /** When the venue observed the price; null when it does not say (the receipt time is used). */
  timestamp: Date | null;
}

/**
 * A price venue. `market` venues are weighted into the VWAP by their volume; `reference` venues
 * (an oracle, an aggregator without volume) only help decide which market quotes are outliers.
 */
export interface PriceVenue {
  readonly name: VenueName;
  readonly role: 'market' | 'reference';
  /** Whether this venue can be asked about the target at all (it lists the token, or takes mints). */
  canPrice(target: PriceTarget): boolean;
  /** The quote, or null when the venue does not list the token. Throws VenueError on failure. */
  fetchQuote(target: PriceTarget, signal: AbortSignal): Promise<VenueQuote | null>;
}

export type VenueFailure =
  | 'timeout'
  | 'network'
  | 'rate_limited'
  | 'geo_blocked'
  | 'http_error'
  | 'bad_response'
  | 'upstream_error';

export class VenueError extends Error {
  override name = 'VenueError';
  constructor(
    readonly venue: VenueName,
    readonly kind: VenueFailure,
    message: string,
    /** For rate limits: how long the venue asked us to wait. */
    readonly retryAfterMs?: number,
  ) {
    super(`${venue}: ${message}`);
  }
}

/** Per-venue settings from configuration. */
export interface VenueSettings {
  baseUrl: string;
  timeoutMs: number;
  apiKey?: string | undefined;
}

export const CANDLE_INTERVALS = ['1m', '5m', '15m', '1h', '4h', '1d'] as const;
export type CandleInterval = (typeof CANDLE_INTERVALS)[number];

export const INTERVAL_MS: Record<CandleInterval, number> = {
  '1m': 60_000,
  '5m': 300_000,
  '15m': 900_000,
  '1h': 3_600_000,
  '4h': 14_400_000,
  '1d': 86_400_000,
};

/** One venue's candle for one bucket; buckets are aligned to UTC multiples of the interval. */
export interface Candle {
  /** Start of the bucket. */
  openTime: Date;
  open: number;
  high: number;
  low: number;
  close: number;
  /** Volume traded in the bucket, in USD; null when the venue does not report it per bucket. */
  volumeUsd: number | null;
  /** False for the still-open (current) bucket, which must never be stored as final. */
  closed: boolean;
}

/** A venue that serves historical candles. */
export interface CandleVenue {
  readonly name: LiveVenueName;
  /** Whether the venue lists the token and serves this interval. */
  canServeCandles(target: PriceTarget, interval: CandleInterval): boolean;
  /**
   * Every candle whose bucket starts in [start, end), oldest first, paging within the venue's
   * per-request limit. Null when the venue does not list the token. Throws VenueError on failure.
   */
  fetchCandles(
    target: PriceTarget,
    interval: CandleInterval,
    start: Date,
    end: Date,
    signal: AbortSignal,
  ): Promise<Candle[] | null>;
}
