import type { Database } from '../db/database.js';
import { chargeWithQuota, type QuotaContext, type QuotaRefusal } from '../limits/quotas.js';
import { type ChargeInput, type ChargeOutcome, chargeAccount } from './ledger.js';

export interface BillingRequest extends ChargeInput {
  /** Set when the key has quotas: the charge then also counts against them, atomically. */
  quota?: QuotaContext | undefined;
}

export type BillingOutcome = ChargeOutcome | QuotaRefusal;

/** How the HTTP edge charges a successful request. One port, so the strategy can change. */
export interface Biller {
  charge(input: BillingRequest): Promise<BillingOutcome>;
}

/** One guarded statement per charge; a quota'd key's charge is one transaction with its counters. */
export function directBiller(db: Database): Biller {
  return {
    charge: (input) => (input.quota ? chargeWithQuota(db, input, input.quota) : chargeAccount(db, input)),
  };
}
