import type { TObject, TSchema } from 'typebox';
import type { RouteSpec } from '../../http/route-spec.js';
import { billedAfter } from './after.js';
import { freeRoute } from './free.js';
import { billedInTransaction } from './in-transaction.js';
import type { RouteBilling } from './route-billing.js';

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
    if (typeof price === 'bigint') return billedAfter(spec, price, price);
    // The balance is checked before the handler does paid work, against the least it can cost.
    if (spec.leastPrice === undefined) throw new Error(`${operationId}: a computed price needs leastPrice`);
    return billedAfter(spec, price, spec.leastPrice);
  }
  if (typeof price !== 'bigint') {
    // tx.charge() runs before the handler has a result for a computed price to look at.
    throw new Error(`${operationId}: billing 'transaction' needs a fixed price`);
  }
  return billedInTransaction(spec, price);
}
