import { cents } from './lib/money.js';

/** Prices per operation in micro-USD (spec §1). The one table routes and GET /account read. */
export const PRICES = {
  priceSingle: cents(1),
  priceBatchBase: cents(5),
  priceBatchPerSymbol: cents(1),
  historical: cents(5),
  aiResolve: cents(25),
  priceSchedule: cents(5),
  aiSchedule: cents(50),
  marketsList: cents(5),
  marketDetail: cents(2),
} as const;

export type PricedOperation = keyof typeof PRICES;
