import type { Database } from '../db/database.js';
import { type ChargeRefusal, type ChargeRequest, chargeAlone } from './charge.js';
import { type ChargeOutcome, chargeAccount } from './ledger.js';

export type BillingOutcome = ChargeOutcome | ChargeRefusal;

/**
 * How the HTTP edge charges a successful request of a route billed after its handler (one port, so
 * the strategy can change). Routes whose charge must commit with rows of their own charge inside
 * their transaction instead (`charge` in ./charge.ts).
 */
export interface Biller {
  charge(input: ChargeRequest): Promise<BillingOutcome>;
}

/** One guarded statement per charge; a quota'd key's charge is one transaction with its counters. */
export function directBiller(db: Database): Biller {
  return {
    charge: (input) => (input.quota ? chargeAlone(db, input) : chargeAccount(db, input)),
  };
}
