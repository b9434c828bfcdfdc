import type { AccountMode } from '../accounts/index.js';
import type { Context } from '../context.js';

/** A market as a resolution needs it: its title, outcome labels, description and mode. */
export interface MarketQuestion {
  /** The market's id (when it was found by its slug, the id is still what the request records). */
  id?: string;
  /** The market's title. */
  question: string;
  /** The market's outcome labels, in index order. */
  outcomes: string[];
  /** The market's description; empty when it has none. */
  context: string;
  /** Sandbox markets resolve with the sandbox models. */
  mode: AccountMode;
}

/** Where `POST /ai/resolve { marketId }` finds its market (docs/ai.md#resolving-a-market). */
export interface MarketSource {
  /** The market with this id, or null when there is none. */
  find(ctx: Context, marketId: string): Promise<MarketQuestion | null>;
}
