import type { Clock } from '../../lib/clock.js';
import type { PriceConfig } from '../config.js';
import type { CandleVenue, LiveVenueName, PriceVenue } from '../types.js';
import { createBinanceVenue } from './binance.js';
import { createCoinbaseVenue } from './coinbase.js';
import { createCoinGeckoVenue } from './coingecko.js';
import { createDexScreenerVenue } from './dexscreener.js';
import { createJupiterVenue } from './jupiter.js';
import { createKrakenVenue } from './kraken.js';
import { createOkxVenue } from './okx.js';
import { createPythVenue } from './pyth.js';

type Settings = PriceConfig['venueSettings'][LiveVenueName];

interface Registration {
  price: (settings: Settings, clock: Clock) => PriceVenue;
  candles: ((settings: Settings, clock: Clock) => CandleVenue) | null;
  /** Why the venue cannot run with these settings, if it cannot (e.g. a required API key). */
  unusable?: (settings: Settings) => string | null;
}

/**
 * Every live venue, keyed by the closed union of names: adding a name to LIVE_VENUES without
 * wiring it here does not compile.
 */
const REGISTRY: { [K in LiveVenueName]: Registration } = {
  binance: { price: createBinanceVenue, candles: createBinanceVenue },
  coinbase: { price: createCoinbaseVenue, candles: createCoinbaseVenue },
  kraken: { price: createKrakenVenue, candles: createKrakenVenue },
  okx: { price: createOkxVenue, candles: createOkxVenue },
  coingecko: { price: createCoinGeckoVenue, candles: createCoinGeckoVenue },
  // Jupiter's keyless host is gone (docs/prices.md#venues): without a key the venue is left out.
  jupiter: {
    price: createJupiterVenue,
    candles: null,
    unusable: (s) => (s.apiKey ? null : 'JUPITER_API_KEY is not set'),
  },
  dexscreener: { price: createDexScreenerVenue, candles: null },
  pyth: { price: createPythVenue, candles: null },
};

export interface LiveVenues {
  price: PriceVenue[];
  candles: CandleVenue[];
  /** Enabled venues left out, and why. */
  disabled: { name: LiveVenueName; reason: string }[];
}

export function createLiveVenues(config: PriceConfig, clock: Clock): LiveVenues {
  const out: LiveVenues = { price: [], candles: [], disabled: [] };
  for (const name of config.venues) {
    const registration = REGISTRY[name];
    const settings = config.venueSettings[name];
    const reason = registration.unusable?.(settings) ?? null;
    if (reason) {
      out.disabled.push({ name, reason });
      continue;
    }
    out.price.push(registration.price(settings, clock));
    if (registration.candles) out.candles.push(registration.candles(settings, clock));
  }
  return out;
}
