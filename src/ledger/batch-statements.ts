import type { Queryable } from '../db/database.js';
import type { BillingOutcome } from './biller.js';
import type { ChargeRequest } from './charge.js';
import * as sql from './sql.js';

/** Items of a batch whose charge failed, when others of the batch committed. */
export type FailedItems = { items: Set<number>; err: unknown } | undefined;

export const REFUSED: BillingOutcome = { ok: false, reason: 'INSUFFICIENT_BALANCE' };

export type CoveredRow =
  | { item: number; entry_id: bigint; balance_after: bigint; account_id: null }
  | {
      item: null;
      entry_id: null;
      /** The balance of an account that does not cover all of its items. */
      balance_after: bigint;
      account_id: string;
    };

interface EachRow {
  item: number;
  entry_id: bigint;
  balance_after: bigint;
}

/**
 * Decides a batch of charges (`outcomes` by position): one statement charges every account that
 * covers all of its items (nearly always all of them); items of an account that does not are then
 * decided one by one, in order, by a second. Outside a transaction each statement commits on its
 * own, so a failure of the second leaves the first's charges standing (returned as the failed
 * items); inside one (`atomic`), any failure throws.
 */
export async function decide(
  db: Queryable,
  items: readonly ChargeRequest[],
  outcomes: BillingOutcome[],
  atomic: boolean,
): Promise<FailedItems> {
  const rows = await db.query<CoveredRow>(sql.CHARGE_COVERED, columns(items));
  const short = new Map<string, bigint>();
  for (const row of rows) {
    if (row.item === null) short.set(row.account_id, row.balance_after);
    else outcomes[row.item - 1] = charged(row);
  }
  const each = short.size > 0 ? itemsWorthDeciding(items, short) : [];
  if (each.length === 0) return undefined;
  try {
    const eachRows = await db.query<EachRow>(
      sql.CHARGE_EACH,
      columns(each.map((i) => items[i] as ChargeRequest)),
    );
    for (const row of eachRows) outcomes[each[row.item - 1] as number] = charged(row);
  } catch (err) {
    if (atomic) throw err;
    return { items: new Set(each), err };
  }
  return undefined;
}

export function charged(row: EachRow): BillingOutcome {
  return { ok: true, entryId: row.entry_id, balanceMicros: row.balance_after };
}

/** The arrays of CHARGE_COVERED and CHARGE_EACH: account, amount, operation, request and key. */
export function columns(items: readonly ChargeRequest[]): unknown[] {
  return [
    items.map((c) => c.accountId),
    items.map((c) => c.amountMicros),
    items.map((c) => c.operation),
    items.map((c) => c.requestId ?? null),
    items.map((c) => c.keyId ?? null),
  ];
}

/**
 * Positions of the items to decide one by one: those of the accounts short of their total whose
 * balance covers at least one of their items (when none fits, every item is refused as it stands).
 */
function itemsWorthDeciding(items: readonly ChargeRequest[], short: ReadonlyMap<string, bigint>): number[] {
  const fitting = new Set<string>();
  for (const item of items) {
    const balance = short.get(item.accountId);
    if (balance !== undefined && item.amountMicros <= balance) fitting.add(item.accountId);
  }
  return [...items.keys()].filter((i) => fitting.has((items[i] as ChargeRequest).accountId));
}
