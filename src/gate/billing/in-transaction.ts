import type { TObject, TSchema } from 'typebox';
import type { RouteSpec } from '../../http/route-spec.js';
import { storeAnswer } from '../../idempotency/index.js';
import { withClaimedKey } from './claimed-key.js';
import { HandlerTransactions } from './handler-transaction.js';
import { billed, checkBalance, contextOf, routeInput } from './request.js';
import type { RouteBilling } from './route-billing.js';

/**
 * A route billed inside its handler's transaction (`billing: 'transaction'`): the handler charges
 * with `tx.charge()` next to the rows the charge pays for, exactly once; under a key the answer is
 * stored in that transaction too, so charge, rows and answer commit together or not at all.
 */
export function billedInTransaction<
  P extends TSchema,
  Q extends TSchema,
  B extends TSchema,
  R extends TObject,
>(spec: RouteSpec<P, Q, B, R>, price: bigint): RouteBilling {
  const { operationId } = spec;
  return {
    async run(call) {
      const check = checkBalance(call, price);
      if (check) await check;
      const ctx = contextOf(call);
      const transactions = new HandlerTransactions(call, ctx, operationId, price);
      const result = await spec.handler(
        routeInput<P, Q, B>(call, ctx, transactions.run),
        call.request,
        call.reply,
      );
      const charged = transactions.committedCharge();
      return billed(call.request.id, result, charged.amountMicros, charged.balanceMicros);
    },
    async runKeyed(call, keyed) {
      const check = checkBalance(call, price, keyed);
      const replayed = check ? await check : undefined;
      if (replayed !== undefined) return replayed;
      return withClaimedKey(call, keyed, async () => {
        const ctx = contextOf(call);
        const transactions = new HandlerTransactions(
          call,
          ctx,
          operationId,
          price,
          async (tx, result, charged) => {
            if (!charged) throw new Error(`${operationId} succeeded without charging`);
            const raw = call.reply.serialize(
              billed(call.request.id, result, charged.amountMicros, charged.balanceMicros),
            ) as string;
            await storeAnswer(tx, keyed.scope, 200, raw);
            return raw;
          },
        );
        const result = await spec.handler(
          routeInput<P, Q, B>(call, ctx, transactions.run),
          call.request,
          call.reply,
        );
        transactions.committedCharge();
        const raw = transactions.storedAnswer(result);
        if (raw === undefined)
          throw new Error(`${operationId}: an idempotent route answers from its transaction`);
        return raw;
      });
    },
  };
}
