import Type from 'typebox';
import { ConfigError, defineSettings, listSetting } from '../lib/settings.js';
import { LIVE_VENUES, type LiveVenueName, type VenueSettings } from './types.js';

/** Price venues, quote caching and aggregation (docs/prices.md#configuration). */
export const priceSettings = defineSettings(
  {
    PRICE_VENUES: Type.String({ default: LIVE_VENUES.join(',') }),
    PRICE_CACHE_TTL_MS: Type.Integer({ default: 2000, minimum: 0 }),
    PRICE_ERROR_CACHE_TTL_MS: Type.Integer({ default: 1000, minimum: 0 }),
    PRICE_VENUE_TIMEOUT_MS: Type.Integer({ default: 2500, minimum: 50 }),
    PRICE_MAX_AGE_MS: Type.Integer({ default: 120_000, minimum: 1000 }),
    PRICE_OUTLIER_TOLERANCE: Type.Number({ default: 0.02, exclusiveMinimum: 0, maximum: 1 }),
    PRICE_MIN_SOURCES: Type.Integer({ default: 2, minimum: 1 }),
    PRICE_BREAKER_FAILURES: Type.Integer({ default: 5, minimum: 1 }),
    PRICE_BREAKER_COOLDOWN_MS: Type.Integer({ default: 30_000, minimum: 0 }),
    PRICE_UNKNOWN_MINT_TTL_MS: Type.Integer({ default: 600_000, minimum: 0 }),
    PRICE_MINT_LOOKUPS_PER_MINUTE: Type.Integer({ default: 60, minimum: 1 }),
    PRICE_MINT_LOOKUPS_PER_ACCOUNT: Type.Integer({ default: 20, minimum: 1 }),
    BINANCE_BASE_URL: Type.String({ default: 'https://data-api.binance.vision' }),
    COINBASE_BASE_URL: Type.String({ default: 'https://api.exchange.coinbase.com' }),
    KRAKEN_BASE_URL: Type.String({ default: 'https://api.kraken.com' }),
    OKX_BASE_URL: Type.String({ default: 'https://www.okx.com' }),
    COINGECKO_BASE_URL: Type.Optional(Type.String({ minLength: 1 })),
    COINGECKO_PLAN: Type.Enum(['demo', 'pro'], { default: 'demo' }),
    COINGECKO_API_KEY: Type.Optional(Type.String({ minLength: 1 })),
    JUPITER_BASE_URL: Type.String({ default: 'https://api.jup.ag/price/v3' }),
    JUPITER_API_KEY: Type.Optional(Type.String({ minLength: 1 })),
    DEXSCREENER_BASE_URL: Type.String({ default: 'https://api.dexscreener.com' }),
    PYTH_BASE_URL: Type.String({ default: 'https://hermes.pyth.network' }),
  },
  (v) => {
    const names = listSetting(v.PRICE_VENUES).map((n) => n.toLowerCase());
    const unknown = names.filter((n) => !(LIVE_VENUES as readonly string[]).includes(n));
    if (unknown.length > 0) {
      throw new ConfigError(
        `Invalid configuration: PRICE_VENUES names unknown venues (${unknown.join(', ')}); known: ${LIVE_VENUES.join(', ')}`,
      );
    }
    const timeoutMs = v.PRICE_VENUE_TIMEOUT_MS;
    const coingeckoBase =
      v.COINGECKO_BASE_URL ??
      (v.COINGECKO_PLAN === 'pro'
        ? 'https://pro-api.coingecko.com/api/v3'
        : 'https://api.coingecko.com/api/v3');
    const venueSettings: Record<LiveVenueName, VenueSettings & { plan?: 'demo' | 'pro' }> = {
      binance: { baseUrl: v.BINANCE_BASE_URL, timeoutMs },
      coinbase: { baseUrl: v.COINBASE_BASE_URL, timeoutMs },
      kraken: { baseUrl: v.KRAKEN_BASE_URL, timeoutMs },
      okx: { baseUrl: v.OKX_BASE_URL, timeoutMs },
      coingecko: { baseUrl: coingeckoBase, timeoutMs, apiKey: v.COINGECKO_API_KEY, plan: v.COINGECKO_PLAN },
      jupiter: { baseUrl: v.JUPITER_BASE_URL, timeoutMs, apiKey: v.JUPITER_API_KEY },
      dexscreener: { baseUrl: v.DEXSCREENER_BASE_URL, timeoutMs },
      pyth: { baseUrl: v.PYTH_BASE_URL, timeoutMs },
    };
    return {
      venues: [...new Set(names)] as LiveVenueName[],
      cacheTtlMs: v.PRICE_CACHE_TTL_MS,
      errorCacheTtlMs: v.PRICE_ERROR_CACHE_TTL_MS,
      maxAgeMs: v.PRICE_MAX_AGE_MS,
      outlierTolerance: v.PRICE_OUTLIER_TOLERANCE,
      minSources: v.PRICE_MIN_SOURCES,
      breakerFailures: v.PRICE_BREAKER_FAILURES,
      breakerCooldownMs: v.PRICE_BREAKER_COOLDOWN_MS,
      unknownMintTtlMs: v.PRICE_UNKNOWN_MINT_TTL_MS,
      mintLookupsPerMinute: v.PRICE_MINT_LOOKUPS_PER_MINUTE,
      mintLookupsPerAccount: v.PRICE_MINT_LOOKUPS_PER_ACCOUNT,
      venueSettings,
    };
  },
);

export type PriceConfig = ReturnType<typeof priceSettings.parse>;
