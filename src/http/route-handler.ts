import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Static, TObject, TSchema } from 'typebox';
import { createContext, type TxContext, withTransaction } from '../context.js';
import { validationError } from '../errors.js';
import {
  classifyHeldKey,
  fingerprint,
  type KeyScope,
  type Replay,
  readIdempotencyKey,
  releaseKey,
  storeAnswer,
} from '../idempotency/idempotency.js';
import { answerAwaitingBalance, type PendingAnswer } from '../idempotency/pending-answer.js';
import type { Principal } from '../keys/authenticate.js';
import { balanceOf, type Charged, ChargeRefusedError, type ChargeRequest, charge } from '../ledger/charge.js';
import type { Clock } from '../lib/clock.js';
import { formatUsd } from '../lib/money.js';
import type { QuotaContext } from '../limits/quotas.js';
import { metrics } from '../metrics/metrics.js';
import type { RouteInput, RouteSpec } from './route.js';
import type { Services } from './services.js';

/** A success as sent: the body, and its serialised bytes when they were stored for replay. */
type Answer = { body: object; raw?: undefined } | { body: object; raw: string | Buffer };

/**
 * Runs one request of a declared route after authentication and validation: the idempotency key,
 * the handler with its context and transaction, the charge, and the answer. Errors propagate to the
 * error handler; nothing is charged or stored for them.
 */
export async function handleRoute<P extends TSchema, Q extends TSchema, B extends TSchema, R extends TObject>(
  spec: RouteSpec<P, Q, B, R>,
  services: Services,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<object | string | Buffer> {
  const principal = request.principal as Principal;
  const header = request.headers['idempotency-key'];
  if (header !== undefined && !spec.idempotent && spec.method !== 'GET') {
    throw validationError([
      {
        path: 'header.idempotency-key',
        message: 'is not accepted by this operation (docs/api.md#idempotency)',
      },
    ]);
  }
  // A GET changes nothing to retry safely: its key is ignored (docs/api.md#idempotency), and a
  // retried GET is a new request with a fresh answer.
  const key = spec.method === 'GET' ? undefined : readIdempotencyKey(header);
  if (key === undefined)
    return ((await execute(spec, services, request, reply, principal, undefined)) as Answer).body;

  const scope: KeyScope = { accountId: principal.accountId, key, requestId: request.id };
  const print = fingerprint(request.method, request.url, request.body);
  if (spec.price !== undefined && spec.billing !== 'transaction') {
    // A route billed after its handler writes nothing until its charge: its key is taken by storing
    // its answer with the charge (idempotency/pending-answer.ts). Until then nothing is held, so a
    // failure has nothing to give back.
    return send(reply, await execute(spec, services, request, reply, principal, { scope, print }));
  }
  const claim = await services.keyClaimer.claim(scope, print);
  if (claim.kind === 'replay') return replay(reply, claim);
  try {
    return send(reply, await execute(spec, services, request, reply, principal, { scope, print }));
  } catch (err) {
    // Nothing was charged or created: the key goes back, and a retry runs afresh.
    await releaseKey(services.db, scope).catch((releaseError: unknown) =>
      request.log.error({ err: releaseError }, 'could not release an idempotency key'),
    );
    throw err;
  }
}

function send(reply: FastifyReply, answer: Answer | { replay: Replay }): string | Buffer {
  if ('replay' in answer) return replay(reply, answer.replay);
  reply.type('application/json; charset=utf-8');
  return answer.raw ?? JSON.stringify(answer.body);
}

function replay(reply: FastifyReply, claim: Replay): string {
  reply
    .code(claim.status)
    .header('idempotent-replayed', 'true')
    .header('x-request-id', claim.requestId)
    .type('application/json; charset=utf-8');
  return claim.body;
}

async function execute<P extends TSchema, Q extends TSchema, B extends TSchema, R extends TObject>(
  spec: RouteSpec<P, Q, B, R>,
  services: Services,
  request: FastifyRequest,
  reply: FastifyReply,
  principal: Principal,
  keyed: { scope: KeyScope; print: string } | undefined,
): Promise<Answer | { replay: Replay }> {
  const scope = keyed?.scope;
  const { db, clock, biller } = services;
  const inTransaction = spec.billing === 'transaction';
  const ctx = createContext(db, clock, { principal, requestId: request.id });
  const chargeOf = (amount: bigint) => chargeRequest(principal, amount, spec.operationId, request.id, clock);
  let charged: Charged | undefined;
  let stored: { from: unknown; answer: Answer } | undefined;
  let transactions = 0;

  const finish = (result: object): object =>
    charged
      ? billed(request.id, result, charged.amountMicros, charged.balanceMicros)
      : { requestId: request.id, ...result };
  /** Serialises the answer as it will be sent and stores it in `tx`, the transaction of its charge. */
  const store = async (tx: TxContext['tx'], result: object): Promise<Answer> => {
    const body = finish(result);
    const raw = reply.serialize(body) as string;
    await storeAnswer(tx, scope as KeyScope, 200, raw);
    return { body, raw };
  };

  const input: RouteInput<P, Q, B> = {
    params: request.params as Static<P>,
    query: request.query as Static<Q>,
    body: request.body as Static<B>,
    principal,
    requestId: request.id,
    ctx,
    transaction: async (fn) => {
      if (scope && ++transactions > 1) {
        throw new Error(`${spec.operationId}: an idempotent route answers from one transaction`);
      }
      try {
        return await withTransaction(ctx, async (tx) => {
          const result = await fn({
            ...tx,
            charge: async (amountMicros) => {
              const amount = amountMicros ?? (typeof spec.price === 'bigint' ? spec.price : undefined);
              if (!inTransaction || amount === undefined || charged) {
                throw new Error(
                  `${spec.operationId}: charge() needs billing 'transaction', a price, and one call`,
                );
              }
              charged = await charge(tx.tx, chargeOf(amount));
              return charged;
            },
          });
          if (scope) stored = { from: result, answer: await store(tx.tx, result as object) };
          return result;
        });
      } catch (err) {
        charged = undefined; // rolled back with everything else
        stored = undefined;
        throw err;
      }
    },
  };
  const result = (await spec.handler(input, request, reply)) as object;
  // The handler's transaction has committed (it threw otherwise): its charge is real.
  if (charged) metrics.charged(spec.operationId, charged.amountMicros);

  if (stored) {
    if (stored.from !== result) throw new Error(`${spec.operationId}: must answer its transaction's result`);
    return stored.answer;
  }
  if (spec.price === undefined) {
    return scope ? store(db, result) : { body: finish(result) };
  }
  if (inTransaction) {
    if (!charged) throw new Error(`${spec.operationId} succeeded without charging`);
    return { body: finish(result) };
  }
  const amount = typeof spec.price === 'function' ? spec.price(input, result as Static<R>) : spec.price;
  const answer = keyed
    ? pendingAnswer(reply, request.id, result, amount, keyed.scope.key, keyed.print, clock)
    : undefined;
  const outcome = await biller.charge({ ...chargeOf(amount), answer });
  if (!outcome.ok) {
    if (outcome.reason === 'IDEMPOTENCY_KEY_TAKEN' && keyed) {
      // Nothing was charged: the key's holder decides the answer (a replay, or 422/409 thrown).
      return { replay: await classifyHeldKey(db, keyed.scope, keyed.print, clock.now()) };
    }
    if (outcome.reason === 'IDEMPOTENCY_KEY_TAKEN') throw new Error('a charge without a key lost one');
    const balance =
      outcome.reason === 'INSUFFICIENT_BALANCE' ? await balanceOf(db, principal.accountId) : undefined;
    throw new ChargeRefusedError(outcome, amount, quotaOf(principal, clock), balance);
  }
  metrics.charged(spec.operationId, amount);
  // With a key, the answer stored with the charge is this one completed with the balance it left.
  return answer
    ? { body: result, raw: answer.bytes(outcome.balanceMicros) }
    : { body: billed(request.id, result, amount, outcome.balanceMicros) };
}

const BALANCE_PLACEHOLDER = '0.00';
const ANSWER_END = `"remainingBalanceUsd":"${BALANCE_PLACEHOLDER}"}`;

/**
 * The answer of a charge with an Idempotency-Key, serialised as it will be sent but for the
 * balance, which the charge fills in (`remainingBalanceUsd` is always the last field): it is stored
 * in the charge's transaction without holding up a coalesced batch for a second round trip.
 */
function pendingAnswer(
  reply: FastifyReply,
  requestId: string,
  result: object,
  amountMicros: bigint,
  idempotencyKey: string,
  print: string,
  clock: Clock,
): PendingAnswer {
  const raw = reply.serialize(billed(requestId, result, amountMicros, 0n)) as string;
  if (!raw.endsWith(ANSWER_END)) throw new Error('remainingBalanceUsd must be the last field of an answer');
  return answerAwaitingBalance(
    { idempotencyKey, fingerprint: print, createdAt: clock.now() },
    raw.slice(0, raw.length - BALANCE_PLACEHOLDER.length - 2),
  );
}

function billed(requestId: string, result: object, amountMicros: bigint, balanceMicros: bigint): object {
  return {
    requestId,
    ...result,
    costUsd: formatUsd(amountMicros),
    remainingBalanceUsd: formatUsd(balanceMicros),
  };
}

function quotaOf(principal: Principal, clock: Clock): QuotaContext | undefined {
  const { verification } = principal;
  return verification.hasQuota
    ? { lineageId: verification.lineageId, limits: verification.quotas, now: clock.now() }
    : undefined;
}

function chargeRequest(
  principal: Principal,
  amountMicros: bigint,
  operation: string,
  requestId: string,
  clock: Clock,
): ChargeRequest {
  return {
    accountId: principal.accountId,
    amountMicros,
    operation,
    requestId,
    keyId: principal.keyId,
    quota: quotaOf(principal, clock),
  };
}
