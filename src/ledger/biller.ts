import type { Queryable } from '../db/database.js';
import { type ChargeInput, type ChargeOutcome, chargeAccount } from './ledger.js';

/** How the HTTP edge charges a successful request. One port, so the strategy can change. */
export interface Biller {
  charge(input: ChargeInput): Promise<ChargeOutcome>;
}

/** One guarded statement per charge. */
export function directBiller(db: Queryable): Biller {
  return { charge: (input) => chargeAccount(db, input) };
}
