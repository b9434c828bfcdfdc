import type { Database } from '../db/database.js';
import type { KeyTaken } from '../idempotency/index.js';
import { type Charged, type ChargeRefusal, type ChargeRequest, chargeAlone } from './charge.js';
import { chargeAccount } from './ledger.js';

export type BillingOutcome = Pick<Charged, 'ok' | 'entryId' | 'balanceMicros'> | ChargeRefusal | KeyTaken;

/**
 * How the HTTP edge charges a successful request of a route billed after its handler (one port, so
 * the strategy can change). Routes whose charge must commit with rows of their own charge inside
 * their transaction instead (`charge` in ./charge.ts).
 */
export interface Biller {
  charge(input: ChargeRequest): Promise<BillingOutcome>;
}

/**
 * One guarded statement per charge; a charge with quota counters, an answer to store or rows it
 * pays for is one transaction with them (see chargeAlone).
 */
export function directBiller(db: Database): Biller {
  return {
    charge: (input) =>
      input.quota || input.answer || input.rows ? chargeAlone(db, input) : chargeAccount(db, input),
  };
}
