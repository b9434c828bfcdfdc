import type { TObject, TSchema } from 'typebox';
import type { RouteSpec } from '../../http/route-spec.js';
import { storeAnswer } from '../../idempotency/index.js';
import { withClaimedKey } from './claimed-key.js';
import { HandlerTransactions, type StoreAnswer } from './handler-transaction.js';
import { contextOf, plainTransaction, routeInput } from './request.js';
import type { RouteBilling } from './route-billing.js';

/** A route without a price: its answer, and under a key that answer stored where the route wrote. */
export function freeRoute<P extends TSchema, Q extends TSchema, B extends TSchema, R extends TObject>(
  spec: RouteSpec<P, Q, B, R>,
): RouteBilling {
  const { operationId } = spec;
  return {
    async run(call) {
      const ctx = contextOf(call);
      const input = routeInput<P, Q, B>(call, ctx, plainTransaction(ctx, operationId));
      const result = await spec.handler(input, call.request, call.reply);
      return { requestId: call.request.id, ...result };
    },
    runKeyed: (call, keyed) =>
      withClaimedKey(call, keyed, async () => {
        const store: StoreAnswer = async (tx, result) => {
          const raw = call.reply.serialize({ requestId: call.request.id, ...result }) as string;
          await storeAnswer(tx, keyed.scope, 200, raw);
          return raw;
        };
        const ctx = contextOf(call);
        const transactions = new HandlerTransactions(call, ctx, operationId, undefined, store);
        const result = await spec.handler(
          routeInput<P, Q, B>(call, ctx, transactions.run),
          call.request,
          call.reply,
        );
        // A handler without a transaction of its own (a webhook test) has its answer stored now.
        return transactions.storedAnswer(result) ?? store(call.services.db, result, undefined);
      }),
  };
}
