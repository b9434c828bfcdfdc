import Type from 'typebox';
import { isSolanaAddress } from '../lib/base58.js';
import { parseUsd } from '../lib/money.js';
import { ConfigError, defineSettings } from '../lib/settings.js';

/** The mainnet USDC mint (DESIGN §13). */
export const MAINNET_USDC_MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';

function usdSetting(name: string, text: string): bigint {
  const micros = parseUsd(text);
  if (micros === null)
    throw new ConfigError(`Invalid configuration: ${name} must be a USD amount such as 5.00`);
  return micros;
}

function addressSetting(name: string, text: string | undefined): string | null {
  if (text === undefined) return null;
  if (!isSolanaAddress(text))
    throw new ConfigError(`Invalid configuration: ${name} must be a base58 Solana address`);
  return text;
}

/**
 * The dashboard (docs/dashboard.md). `DEPOSIT_ADDRESS`, `USDC_MINT` and `DEPOSIT_MIN_USD` are the
 * deposit watcher's settings (DESIGN §13); the dashboard reads them to show where funds go, and
 * they move to the deposits feature's own fragment when the watcher lands.
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
    DEPOSIT_ADDRESS: Type.Optional(Type.String({ minLength: 1 })),
    USDC_MINT: Type.String({ default: MAINNET_USDC_MINT }),
    DEPOSIT_MIN_USD: Type.String({ default: '1.00' }),
  },
  (v) => ({
    /** The `chainId` of every sign-in input. */
    chainId: v.SIWS_CHAIN_ID,
    /** Sign-in challenges and verifications per client address: a token bucket. */
    signInLimit: { perSecond: v.SIGN_IN_LIMIT_PER_SECOND, burst: v.SIGN_IN_LIMIT_BURST },
    /** Below this balance the dashboard's home page warns. */
    lowBalanceMicros: usdSetting('DASHBOARD_LOW_BALANCE_USD', v.DASHBOARD_LOW_BALANCE_USD),
    deposits: {
      /** The treasury wallet deposits are sent to; null: not configured (the operator credits). */
      address: addressSetting('DEPOSIT_ADDRESS', v.DEPOSIT_ADDRESS),
      usdcMint: addressSetting('USDC_MINT', v.USDC_MINT) as string,
      minimumMicros: usdSetting('DEPOSIT_MIN_USD', v.DEPOSIT_MIN_USD),
    },
  }),
);

export type DashboardSettings = ReturnType<typeof dashboardSettings.parse>;
