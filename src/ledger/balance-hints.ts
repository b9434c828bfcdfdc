import type { Queryable } from '../db/database.js';
import { setBounded } from '../lib/bounded-map.js';
import type { Clock } from '../lib/clock.js';
import { insufficientBalance } from './charge.js';
import * as sql from './sql.js';

/** How long a balance this process saw answers for its account before it is read again. */
export const HINT_TTL_MS = 10_000;
/** Accounts remembered at once (the least recently seen is dropped first). */
const MAX_HINTS = 100_000;

interface Hint {
  balanceMicros: bigint;
  seenAt: number;
}

/**
 * The balance check before paid work (docs/api.md#money): a request the balance cannot pay is
 * refused with 402 INSUFFICIENT_BALANCE before its handler calls a venue or a model. The check reads
 * what the request path already has — the balance each charge of this process left — so a funded
 * account's request costs a map lookup, not a query; the database is read only for an account this
 * process has not charged in the last HINT_TTL_MS, and for one whose last balance looks short (a
 * deposit may have arrived since, so a refusal is always decided on a fresh read). The charge stays
 * the authority: a balance spent meanwhile elsewhere is refused there, as before.
 */
export class BalanceHints {
  private readonly hints = new Map<string, Hint>();
  /** Reads in flight, one per account: a burst on an account this process has not seen reads once. */
  private readonly reading = new Map<string, Promise<bigint | undefined>>();

  constructor(private readonly clock: Clock) {}

  /** Records the balance a charge (or a read) left. */
  saw(accountId: string, balanceMicros: bigint): void {
    setBounded(this.hints, accountId, { balanceMicros, seenAt: this.clock.now().getTime() }, MAX_HINTS);
  }

  /**
   * Nothing when the account may pay `amountMicros` (synchronously on the hot path: a recent balance
   * that covers it), else a promise that reads the balance and throws 402 INSUFFICIENT_BALANCE when
   * it does not cover it.
   */
  check(db: Queryable, accountId: string, amountMicros: bigint): Promise<void> | undefined {
    const hint = this.hints.get(accountId);
    if (
      hint !== undefined &&
      hint.balanceMicros >= amountMicros &&
      this.clock.now().getTime() - hint.seenAt < HINT_TTL_MS
    ) {
      return undefined;
    }
    return this.read(db, accountId, amountMicros);
  }

  private async read(db: Queryable, accountId: string, amountMicros: bigint): Promise<void> {
    let reading = this.reading.get(accountId);
    if (reading === undefined) {
      reading = this.fetch(db, accountId).finally(() => this.reading.delete(accountId));
      this.reading.set(accountId, reading);
    }
    const balance = await reading;
    // A missing account is the charge's to refuse (the key's account was checked at authentication).
    if (balance !== undefined && balance < amountMicros) throw insufficientBalance(amountMicros, balance);
  }

  private async fetch(db: Queryable, accountId: string): Promise<bigint | undefined> {
    const [row] = await db.query<{ balance_micros: bigint }>(sql.BALANCE, [accountId]);
    if (row !== undefined) this.saw(accountId, row.balance_micros);
    return row?.balance_micros;
  }
}
