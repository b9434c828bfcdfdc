import Type from 'typebox';
import { parseUsd } from '../lib/money.js';
import { ConfigError, defineSettings } from '../lib/settings.js';

/** The live-data streams' own settings (docs/operations.md#event-streams); their limits are every stream's. */
export const liveStreamSettings = defineSettings(
  {
    STREAM_MINUTE_USD: Type.String({ default: '0.002', minLength: 1 }),
    STREAM_PRICE_INTERVAL_MS: Type.Integer({ default: 1000, minimum: 100, maximum: 60_000 }),
    STREAM_UNPRICED_PER_ACCOUNT: Type.Integer({ default: 50, minimum: 0 }),
  },
  (v) => {
    const minuteMicros = parseUsd(v.STREAM_MINUTE_USD);
    if (minuteMicros === null || minuteMicros <= 0n)
      throw new ConfigError(
        `Invalid configuration: STREAM_MINUTE_USD must be a positive USD amount (got "${v.STREAM_MINUTE_USD}")`,
      );
    return {
      /** What each started minute of a price or market stream costs, micro-USD. */
      minuteMicros,
      /** How often each subscribed symbol's VWAP is computed (and at most how often it is sent). */
      priceIntervalMs: v.STREAM_PRICE_INTERVAL_MS,
      /** Distinct unpriced mints outside the registry one account's live price streams may follow (per process). */
      unpricedPerAccount: v.STREAM_UNPRICED_PER_ACCOUNT,
    };
  },
);

export type LiveStreamSettings = ReturnType<typeof liveStreamSettings.parse>;
