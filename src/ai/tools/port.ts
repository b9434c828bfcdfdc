/**
 * What Sibyl's own tools read (docs/ai.md#sibyls-tools): its stored prices and its markets, as the
 * rooms that own them answer. Stated here, in the AI room, and implemented by the historical and
 * markets rooms (composed in `ports.ts`), so that the AI room names no other room's table.
 */

/** The candle Sibyl stored that contains an instant, combined over its venues. */
export interface StoredCandle {
  /** The finest interval Sibyl has a stored candle of for that instant (`1m` … `1d`). */
  interval: string;
  /** The bucket's open and close (ISO 8601, UTC); the instant is in [openTime, closeTime). */
  openTime: string;
  closeTime: string;
  /** The volume-weighted close of the venues' candles for the bucket, USD. */
  price: number;
  /** The venues whose closes make up `price`. */
  sources: string[];
  /** As a spot price: enough venues (PRICE_MIN_SOURCES) whose closes lie within the outlier tolerance. */
  valid: boolean;
}

/** What the stored prices say of a symbol at an instant. */
export type StoredPrice =
  /** Not a symbol nor a mint address. */
  | { kind: 'invalid_symbol'; reason: string }
  /** Well formed, but no token Sibyl knows. */
  | { kind: 'unknown_symbol'; symbol: string }
  | { kind: 'no_data'; symbol: string }
  | { kind: 'candle'; symbol: string; candle: StoredCandle };

/** A market as the `sibyl_market` tool tells it. */
export interface MarketFacts {
  id: string;
  title: string;
  status: string;
  /** Each outcome's label and its probability now (docs/markets.md's rule). */
  outcomes: { index: number; label: string; probability: number }[];
  closesAt: string;
  resolution: {
    /** `PRICE_FEED`, `AI`, `ADMIN` or `MANUAL_VOTE`. */
    type: string;
    /** How the market is decided, in a sentence. */
    rule: string;
    winningOutcomeIndex: number | null;
    resolvedAt: string | null;
  };
  /** The market's description (often its resolution criteria), possibly cut. */
  description: string;
}

/** Sibyl's data as the tools reach it; each call reads the database of the resolver's process. */
export interface SibylData {
  /** The stored candle containing `at` for `symbol` (a symbol or a mint address, as given). */
  price(symbol: string, at: Date): Promise<StoredPrice>;
  /** The market with this id or slug; null when there is none (drafts are none). */
  market(id: string): Promise<MarketFacts | null>;
}
