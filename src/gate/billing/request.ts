import type { FastifyReply } from 'fastify';
import type { Static, TSchema } from 'typebox';
import { type Context, createContext, withTransaction } from '../../context.js';
import type { RouteInput, RouteTransaction } from '../../http/route-spec.js';
import { heldKeyAnswer, type Replay } from '../../idempotency/index.js';
import type { Principal } from '../../keys/index.js';
import {
  type BillingOutcome,
  balanceOf,
  ChargeRefusedError,
  type ChargeRequest,
  type PaidRows,
} from '../../ledger/index.js';
import type { Clock } from '../../lib/clock.js';
import { formatUsd } from '../../lib/money.js';
import type { QuotaContext } from '../../limits/index.js';
import type { Services } from '../services.js';
import type { Keyed, RouteCall } from './route-billing.js';

/** What every strategy's request shares: its context, and the handler's input with its `transaction`. */
export function contextOf(call: RouteCall): Context {
  return createContext(call.services.db, call.services.clock, {
    principal: call.principal,
    requestId: call.request.id,
  });
}

export function routeInput<P extends TSchema, Q extends TSchema, B extends TSchema>(
  call: RouteCall,
  ctx: Context,
  transaction: RouteInput<P, Q, B>['transaction'],
  chargeWith: RouteInput<P, Q, B>['chargeWith'] = noRows(call),
): RouteInput<P, Q, B> {
  const { request } = call;
  return {
    params: request.params as Static<P>,
    query: request.query as Static<Q>,
    body: request.body as Static<B>,
    principal: call.principal,
    requestId: request.id,
    ctx,
    transaction,
    chargeWith,
  };
}

/** `input.chargeWith` of a route not billed after its handler: rows there would be written by nothing. */
function noRows(call: RouteCall): RouteInput<TSchema, TSchema, TSchema>['chargeWith'] {
  return () => {
    throw new Error(`${call.request.routeOptions.url}: chargeWith() needs billing 'after'`);
  };
}

/** The rows a request billed after its handler hands to its charge (`input.chargeWith`), at most once. */
export class RowsForCharge {
  rows: PaidRows | undefined;

  readonly attach = (rows: PaidRows): void => {
    if (this.rows) throw new Error('chargeWith() is called once per request');
    this.rows = rows;
  };
}

/** `input.transaction` of a route not billed in its transaction: calling `tx.charge()` is a mistake. */
export function plainTransaction(
  ctx: Context,
  operationId: string,
): RouteInput<TSchema, TSchema, TSchema>['transaction'] {
  const charge = (): never => {
    throw new Error(`${operationId}: charge() needs billing 'transaction'`);
  };
  return (fn) => withTransaction(ctx, (tx) => fn({ ...tx, charge } satisfies RouteTransaction));
}

/** A billed answer: the result with its request id, its cost and the balance its charge left. */
export function billed(
  requestId: string,
  result: object,
  amountMicros: bigint,
  balanceMicros: bigint,
): object {
  return {
    requestId,
    ...result,
    costUsd: formatUsd(amountMicros),
    remainingBalanceUsd: formatUsd(balanceMicros),
  };
}

export function quotaOf(principal: Principal, clock: Clock): QuotaContext | undefined {
  const { verification } = principal;
  return verification.hasQuota
    ? { lineageId: verification.lineageId, limits: verification.quotas, now: clock.now() }
    : undefined;
}

/** The key a charge is booked against: none for the account's owner in the dashboard. */
export function ledgerKeyId(principal: Principal): string | undefined {
  return principal.owner ? undefined : principal.keyId;
}

export function chargeRequest(call: RouteCall, operation: string, amountMicros: bigint): ChargeRequest {
  const { principal } = call;
  return {
    accountId: principal.accountId,
    amountMicros,
    operation,
    requestId: call.request.id,
    keyId: ledgerKeyId(principal),
    quota: quotaOf(principal, call.services.clock),
  };
}

/**
 * Why a charge billed after its work was refused, as the error to answer: 402 with the balance
 * read fresh (and told to the balance hints), or 429 with the quota that refused.
 */
export async function refusal(
  services: Pick<Services, 'db' | 'clock' | 'balances'>,
  principal: Principal,
  outcome: BillingOutcome & { ok: false },
  amount: bigint,
): Promise<Error> {
  if (outcome.reason === 'IDEMPOTENCY_KEY_TAKEN') return new Error('a charge without a key lost one');
  const { db, clock } = services;
  const balance =
    outcome.reason === 'INSUFFICIENT_BALANCE' ? await balanceOf(db, principal.accountId) : undefined;
  if (balance !== undefined) services.balances.saw(principal.accountId, balance);
  return new ChargeRefusedError(outcome, amount, quotaOf(principal, clock), balance);
}

/** Sends an answer serialised (and stored) before: Fastify sends strings and buffers as they are. */
export function sendStored<T extends string | Buffer>(reply: FastifyReply, raw: T): T {
  reply.type('application/json; charset=utf-8');
  return raw;
}

export function replay(reply: FastifyReply, claim: Replay): string {
  reply
    .code(claim.status)
    .header('idempotent-replayed', 'true')
    .header('x-request-id', claim.requestId)
    .type('application/json; charset=utf-8');
  return claim.body;
}

/**
 * The balance check before paid work (ledger/balance-hints.ts): undefined when the balance may pay
 * `amountMicros` (at once, without a query: a funded account's hot path), else a promise that
 * throws 402 INSUFFICIENT_BALANCE when a fresh read says it cannot. Under a key, a refused request
 * whose key is already held answers as the key's holder decides (a replay of the stored answer, 422,
 * 409): a retry of a request that spent the last of the balance gets its answer, not a refusal. The
 * promise resolves to that replay's bytes, or to undefined when the balance can pay after all.
 */
export function checkBalance(
  call: RouteCall,
  amountMicros: bigint,
  keyed?: Keyed,
): Promise<string | undefined> | undefined {
  const { db, balances } = call.services;
  const pending = balances.check(db, call.principal.accountId, amountMicros);
  return pending === undefined ? undefined : refusedUnlessHeld(call, pending, keyed);
}

async function refusedUnlessHeld(
  call: RouteCall,
  pending: Promise<void>,
  keyed: Keyed | undefined,
): Promise<string | undefined> {
  try {
    await pending;
    return undefined;
  } catch (err) {
    if (keyed === undefined) throw err;
    const { db, clock } = call.services;
    const held = await heldKeyAnswer(db, keyed.scope, keyed.print, clock.now());
    if (held === undefined) throw err;
    return replay(call.reply, held);
  }
}
