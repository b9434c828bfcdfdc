import { type Context, withTransaction } from '../../context.js';
import type { Queryable } from '../../db/database.js';
import type { RouteTransaction } from '../../http/route-spec.js';
import { type Charged, charge } from '../../ledger/index.js';
import { metrics } from '../../metrics/metrics.js';
import { chargeRequest } from './request.js';
import type { RouteCall } from './route-billing.js';

/** Stores a keyed request's answer in the transaction it answers from; returns the bytes stored. */
export type StoreAnswer = (tx: Queryable, result: object, charged: Charged | undefined) => Promise<string>;

/**
 * `input.transaction` of one request of a route billed in its transaction, or storing its answer in
 * it (an Idempotency-Key): each call is a transaction of its own, and what it charged and stored
 * counts once it has committed — a rolled-back one leaves nothing here.
 */
export class HandlerTransactions {
  private charged: Charged | undefined;
  private stored: { result: unknown; raw: string } | undefined;
  private calls = 0;

  constructor(
    private readonly call: RouteCall,
    private readonly ctx: Context,
    private readonly operationId: string,
    /** The route's price when `tx.charge()` may charge it (billing 'transaction'). */
    private readonly price: bigint | undefined,
    /** With an Idempotency-Key: the handler answers from one transaction, which stores its answer. */
    private readonly store?: StoreAnswer,
  ) {}

  readonly run = async <T>(fn: (tx: RouteTransaction) => Promise<T>): Promise<T> => {
    if (this.store && ++this.calls > 1) {
      throw new Error(`${this.operationId}: an idempotent route answers from one transaction`);
    }
    let charged: Charged | undefined;
    const committed = await withTransaction(this.ctx, async (tx) => {
      const result = await fn({
        ...tx,
        charge: async (amountMicros) => {
          if (this.price === undefined || charged || this.charged) {
            throw new Error(
              `${this.operationId}: charge() needs billing 'transaction', a price, and one call`,
            );
          }
          charged = await charge(
            tx.tx,
            chargeRequest(this.call, this.operationId, amountMicros ?? this.price),
          );
          return charged;
        },
      });
      return { result, raw: this.store ? await this.store(tx.tx, result as object, charged) : undefined };
    });
    if (charged) {
      this.charged = charged;
      this.call.services.balances.saw(this.call.principal.accountId, charged.balanceMicros);
      metrics.charged(this.operationId, charged.amountMicros);
    }
    if (committed.raw !== undefined) this.stored = { result: committed.result, raw: committed.raw };
    return committed.result;
  };

  /** The charge a committed transaction made: a route billed in its transaction must make one. */
  committedCharge(): Charged {
    if (!this.charged) throw new Error(`${this.operationId} succeeded without charging`);
    return this.charged;
  }

  /** The answer stored by the handler's transaction (none ran: undefined), which it must answer. */
  storedAnswer(result: object): string | undefined {
    if (!this.stored) return undefined;
    if (this.stored.result !== result)
      throw new Error(`${this.operationId}: must answer its transaction's result`);
    return this.stored.raw;
  }
}
