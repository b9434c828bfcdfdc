import Type from 'typebox';
import { isSolanaAddress } from '../lib/base58.js';
import { parseUsd } from '../lib/money.js';
import { ConfigError, defineSettings } from '../lib/settings.js';

/** Mainnet USDC, the SPL Token mint of Circle's USD Coin (docs/deposits.md#configuration). */
export const MAINNET_USDC_MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';

const OptionalText = Type.Optional(Type.String({ minLength: 1 }));

/**
 * The deposit watcher (docs/deposits.md#configuration). It watches only when both SOLANA_RPC_URL
 * and DEPOSIT_ADDRESS are set. DEPOSIT_ADDRESS alone is where the dashboard tells users to send
 * funds while the operator credits them by hand (the watcher off, as /readyz and the dashboard
 * say); SOLANA_RPC_URL alone has nothing to watch and is refused at start-up.
 */
export const depositSettings = defineSettings(
  {
    SOLANA_RPC_URL: OptionalText,
    DEPOSIT_ADDRESS: OptionalText,
    USDC_MINT: Type.String({ default: MAINNET_USDC_MINT, minLength: 1 }),
    DEPOSIT_POLL_MS: Type.Integer({ default: 5000, minimum: 500 }),
    DEPOSIT_MIN_USD: Type.String({ default: '1.00', minLength: 1 }),
    SOLANA_RPC_TIMEOUT_MS: Type.Integer({ default: 10_000, minimum: 100 }),
    SOLANA_RPC_MAX_ATTEMPTS: Type.Integer({ default: 5, minimum: 1, maximum: 20 }),
    SOLANA_RPC_BATCH_SIZE: Type.Integer({ default: 100, minimum: 1, maximum: 1000 }),
  },
  (v) => {
    const problem = (message: string) => new ConfigError(`Invalid configuration: ${message}`);
    if (v.SOLANA_RPC_URL !== undefined && v.DEPOSIT_ADDRESS === undefined) {
      throw problem('SOLANA_RPC_URL is set without DEPOSIT_ADDRESS (the deposit watcher needs both)');
    }
    if (v.SOLANA_RPC_URL !== undefined && !/^https?:\/\/[^\s]+$/.test(v.SOLANA_RPC_URL)) {
      throw problem('SOLANA_RPC_URL must be an http(s) URL');
    }
    if (v.DEPOSIT_ADDRESS !== undefined && !isSolanaAddress(v.DEPOSIT_ADDRESS)) {
      throw problem('DEPOSIT_ADDRESS must be a base58 Solana address');
    }
    if (!isSolanaAddress(v.USDC_MINT)) throw problem('USDC_MINT must be a base58 Solana address');
    const minUsdMicros = parseUsd(v.DEPOSIT_MIN_USD);
    if (minUsdMicros === null) throw problem('DEPOSIT_MIN_USD must be a USD amount such as 1.00');
    return {
      /** Null: the watcher is off (docs/deposits.md says how /readyz shows it). */
      watch:
        v.SOLANA_RPC_URL !== undefined && v.DEPOSIT_ADDRESS !== undefined
          ? { rpcUrl: v.SOLANA_RPC_URL, depositAddress: v.DEPOSIT_ADDRESS }
          : null,
      /** The treasury wallet shown to users, watched or not; null: none configured. */
      depositAddress: v.DEPOSIT_ADDRESS ?? null,
      usdcMint: v.USDC_MINT,
      pollMs: v.DEPOSIT_POLL_MS,
      /** Transfers worth less are recorded as ignored, not credited. */
      minUsdMicros,
      rpc: {
        timeoutMs: v.SOLANA_RPC_TIMEOUT_MS,
        maxAttempts: v.SOLANA_RPC_MAX_ATTEMPTS,
        /** getTransaction calls sent together as one JSON-RPC batch. */
        batchSize: v.SOLANA_RPC_BATCH_SIZE,
      },
    };
  },
);

export type DepositConfig = ReturnType<typeof depositSettings.parse>;

/** Where funds go, as the dashboard's funds page shows it. */
export interface DepositDisplay {
  /** The treasury wallet; null: none configured (the operator credits deposits). */
  address: string | null;
  usdcMint: string;
  minimumMicros: bigint;
}

export function depositDisplay(config: DepositConfig): DepositDisplay {
  return {
    address: config.depositAddress,
    usdcMint: config.usdcMint,
    minimumMicros: config.minUsdMicros,
  };
}
