import type { Clock } from '../../lib/clock.js';
import type { PriceTarget } from '../tokens.js';
import { type PriceVenue, SANDBOX_VENUES, type SandboxVenueName } from '../types.js';
import { SANDBOX_TOKENS, sandboxQuote } from './feed.js';

function createSandboxVenue(name: SandboxVenueName, clock: Clock): PriceVenue {
  return {
    name,
    role: 'market',
    canPrice: (target: PriceTarget) => target.token !== null && target.token.symbol in SANDBOX_TOKENS,
    fetchQuote: async (target: PriceTarget) => {
      if (!target.token) return null;
      return sandboxQuote(target.token.symbol, name, clock.now().getTime());
    },
  };
}

/** The three simulated venues every sandbox account prices from (and no live account ever does). */
export function createSandboxVenues(clock: Clock): PriceVenue[] {
  return SANDBOX_VENUES.map((name) => createSandboxVenue(name, clock));
}
