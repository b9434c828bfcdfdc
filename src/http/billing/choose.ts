import type { TObject, TSchema } from 'typebox';
import { AppError } from '../../errors.js';
import { noteRefusal } from '../../ledger/index.js';
import type { RouteSpec } from '../route-spec.js';
import { billedAfter } from './after.js';
import { freeRoute } from './free.js';
import { billedInTransaction } from './in-transaction.js';
import type { RouteBilling, RouteCall } from './route-billing.js';

/**
 * The billing strategy of a route, from its `price` and `billing`: free, billed after its handler
 * (coalesced by the biller), or billed inside its handler's transaction. A declaration that cannot
 * bill as it says throws here, when the route is defined, not on its first request.
 */
export function routeBilling<P extends TSchema, Q extends TSchema, B extends TSchema, R extends TObject>(
  spec: RouteSpec<P, Q, B, R>,
): RouteBilling {
  const { operationId, price, billing } = spec;
  if (price === undefined) {
    if (billing !== undefined) throw new Error(`${operationId}: billing '${billing}' needs a price`);
    return freeRoute(spec);
  }
  if (billing !== 'transaction') {
    if (typeof price === 'bigint') return alertingRefusals(billedAfter(spec, price, price));
    // The balance is checked before the handler does paid work, against the least it can cost.
    if (spec.leastPrice === undefined) throw new Error(`${operationId}: a computed price needs leastPrice`);
    return alertingRefusals(billedAfter(spec, price, spec.leastPrice));
  }
  if (typeof price !== 'bigint') {
    // tx.charge() runs before the handler has a result for a computed price to look at.
    throw new Error(`${operationId}: billing 'transaction' needs a fixed price`);
  }
  return alertingRefusals(billedInTransaction(spec, price));
}

/**
 * A paid route whose 402 INSUFFICIENT_BALANCE — from the balance check before its handler, from its
 * charge, in its transaction or not — tells the ledger, once the request's transaction is gone, so
 * that the first refusal since a credit records `balance.depleted` (docs/webhooks.md#balance-alerts).
 * A successful request pays nothing for it.
 */
function alertingRefusals(billing: RouteBilling): RouteBilling {
  const noted = async (call: RouteCall, err: unknown): Promise<never> => {
    if (err instanceof AppError && err.code === 'INSUFFICIENT_BALANCE') {
      await noteRefusal(call.services.db, call.principal.accountId);
    }
    throw err;
  };
  return {
    run: (call) => billing.run(call).catch((err: unknown) => noted(call, err)),
    runKeyed: (call, keyed) => billing.runKeyed(call, keyed).catch((err: unknown) => noted(call, err)),
  };
}
