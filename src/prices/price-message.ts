import type { AccountMode } from '../accounts/index.js';
import type { SignedKind } from '../attestations/index.js';

/**
 * The one mapping from a priced answer to its signed message, kind 1 (docs/attestations.md#prices):
 * the request's id and mode, the time the price was computed, the symbol or mint as asked, the price
 * as answered, its source count and validity. `GET /price`, the batch and a scheduled price check
 * (docs/attestations.md#scheduled-jobs) all sign this.
 */
export function priceMessage(
  request: { requestId: string; mode: AccountMode; timeMs: number },
  priced: { symbol: string; vwapPrice: number; sourceCount: number; isValid: boolean },
): SignedKind {
  return {
    kind: 'price',
    fields: {
      mode: request.mode,
      requestId: request.requestId,
      timeMs: request.timeMs,
      symbolOrMint: priced.symbol,
      price: priced.vwapPrice,
      sources: priced.sourceCount,
      valid: priced.isValid,
    },
  };
}
