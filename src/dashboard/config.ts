import Type from 'typebox';
import { parseUsd } from '../lib/money.js';
import { ConfigError, defineSettings } from '../lib/settings.js';

function usdSetting(name: string, text: string): bigint {
  const micros = parseUsd(text);
  if (micros === null)
    throw new ConfigError(`Invalid configuration: ${name} must be a USD amount such as 5.00`);
  return micros;
}

/**
 * The dashboard (docs/dashboard.md). Where funds go (`DEPOSIT_ADDRESS`, `USDC_MINT`,
 * `DEPOSIT_MIN_USD`) is the deposits feature's setting (src/deposits/config.ts), read from there.
 */
export const dashboardSettings = defineSettings(
  {
    SIWS_CHAIN_ID: Type.String({
      default: 'mainnet',
      minLength: 1,
      maxLength: 64,
      pattern: '^[\\x21-\\x7e]+$',
    }),
    SIGN_IN_LIMIT_PER_SECOND: Type.Number({ default: 0.2, minimum: 0.001 }),
    SIGN_IN_LIMIT_BURST: Type.Integer({ default: 20, minimum: 1 }),
    DASHBOARD_LOW_BALANCE_USD: Type.String({ default: '5.00' }),
  },
  (v) => ({
    /** The `chainId` of every sign-in input. */
    chainId: v.SIWS_CHAIN_ID,
    /** Sign-in challenges and verifications per client address: a token bucket. */
    signInLimit: { perSecond: v.SIGN_IN_LIMIT_PER_SECOND, burst: v.SIGN_IN_LIMIT_BURST },
    /** Below this balance the dashboard's home page warns. */
    lowBalanceMicros: usdSetting('DASHBOARD_LOW_BALANCE_USD', v.DASHBOARD_LOW_BALANCE_USD),
  }),
);

export type DashboardSettings = ReturnType<typeof dashboardSettings.parse>;
