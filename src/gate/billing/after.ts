import type { Static, TObject, TSchema } from 'typebox';
import type { RouteInput, RouteSpec } from '../../http/route-spec.js';
import { classifyHeldKey, pendingAnswer } from '../../idempotency/index.js';
import { metrics } from '../../metrics/metrics.js';
import {
  billed,
  chargeRequest,
  checkBalance,
  contextOf,
  plainTransaction,
  RowsForCharge,
  refusal,
  replay,
  routeInput,
} from './request.js';
import type { RouteBilling } from './route-billing.js';

/**
 * A route billed after its handler (`billing: 'after'`, the default): the handler writes nothing,
 * and its success is charged by the biller, coalesced with other requests' charges — with the rows
 * the handler handed to `input.chargeWith`, which commit in the charge's transaction. Under a key,
 * nothing is claimed beforehand: the key is taken by storing the answer with the charge, in the
 * charge's own statement (idempotency/pending-answer.ts). Until then nothing is held, so a failure
 * has nothing to give back.
 */
export function billedAfter<P extends TSchema, Q extends TSchema, B extends TSchema, R extends TObject>(
  spec: RouteSpec<P, Q, B, R>,
  price: bigint | ((input: RouteInput<P, Q, B>, result: Static<R>) => bigint),
  /** What the balance must cover before the handler runs (the least a request can cost). */
  least: bigint,
): RouteBilling {
  const { operationId } = spec;
  const amountOf = typeof price === 'bigint' ? () => price : price;
  return {
    async run(call) {
      const check = checkBalance(call, least);
      if (check) await check;
      const ctx = contextOf(call);
      const rows = new RowsForCharge();
      const input = routeInput<P, Q, B>(call, ctx, plainTransaction(ctx, operationId), rows.attach);
      const result = await spec.handler(input, call.request, call.reply);
      const amount = amountOf(input, result);
      const outcome = await call.services.biller.charge({
        ...chargeRequest(call, operationId, amount),
        rows: rows.rows,
      });
      if (!outcome.ok) throw await refusal(call.services, call.principal, outcome, amount);
      call.services.balances.saw(call.principal.accountId, outcome.balanceMicros);
      metrics.charged(operationId, amount);
      return billed(call.request.id, result, amount, outcome.balanceMicros);
    },
    async runKeyed(call, keyed) {
      const { db, clock, biller } = call.services;
      const check = checkBalance(call, least, keyed);
      const replayed = check ? await check : undefined;
      if (replayed !== undefined) return replayed;
      const ctx = contextOf(call);
      const rows = new RowsForCharge();
      const input = routeInput<P, Q, B>(call, ctx, plainTransaction(ctx, operationId), rows.attach);
      const result = await spec.handler(input, call.request, call.reply);
      const amount = amountOf(input, result);
      const answer = pendingAnswer(
        { idempotencyKey: keyed.scope.key, fingerprint: keyed.print, createdAt: clock.now() },
        (balanceMicros) =>
          call.reply.serialize(billed(call.request.id, result, amount, balanceMicros)) as string,
      );
      const outcome = await biller.charge({
        ...chargeRequest(call, operationId, amount),
        answer,
        rows: rows.rows,
      });
      if (!outcome.ok) {
        if (outcome.reason === 'IDEMPOTENCY_KEY_TAKEN') {
          // Nothing was charged: the key's holder decides the answer (a replay, or 422/409 thrown).
          return replay(call.reply, await classifyHeldKey(db, keyed.scope, keyed.print, clock.now()));
        }
        throw await refusal(call.services, call.principal, outcome, amount);
      }
      call.services.balances.saw(call.principal.accountId, outcome.balanceMicros);
      metrics.charged(operationId, amount);
      // The answer the charge stored, completed in place with the balance it left.
      call.reply.type('application/json; charset=utf-8');
      return answer.bytes(outcome.balanceMicros);
    },
  };
}
