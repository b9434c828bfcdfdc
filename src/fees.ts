import { cents } from './lib/money.js';

/**
 * What each operation costs, in micro-USD (docs/api.md#pricing): the one fee table that routes and
 * GET /account read. (The product also sells *prices*; this is what it charges for them.)
 */
export const FEES = {
  priceSingle: cents(1),
  priceBatchBase: cents(5),
  priceBatchPerSymbol: cents(1),
  /** A price's attestation (`attest=true`), per symbol signed (docs/attestations.md#prices). */
  attestationPerSymbol: 5000n,
  historical: cents(5),
  aiResolve: cents(25),
  priceSchedule: cents(5),
  aiSchedule: cents(50),
  marketsList: cents(5),
  marketDetail: cents(2),
  marketHistory: cents(5),
  marketTrades: cents(2),
} as const;
