import { type Context, queryable } from '../context.js';
import { type ValidationProblem, validationError } from '../errors.js';
import { formatUsd } from '../lib/money.js';
import { parseIsoTimestamp } from '../lib/time.js';
import * as sql from './sql.js';

export const ENTRY_KINDS = ['deposit', 'charge', 'refund', 'adjustment'] as const;
export type EntryKind = (typeof ENTRY_KINDS)[number];

interface EntryRow {
  id: bigint | string;
  kind: EntryKind;
  amount_micros: bigint;
  balance_after_micros: bigint;
  operation: string | null;
  request_id: string | null;
  key_id: string | null;
  reference: string | null;
  refund_of: bigint | string | null;
  memo: string | null;
  created_at: Date;
  deposit_asset: 'SOL' | 'USDC' | null;
  deposit_amount: bigint | string | null;
  deposit_decimals: number | null;
  deposit_rate: string | null;
  deposit_slot: bigint | string | null;
  deposit_signature: string | null;
}

/** `amount` base units of `decimals` as a decimal string without trailing zeros. */
function tokenAmount(amount: bigint, decimals: number): string {
  if (decimals === 0) return amount.toString();
  const text = amount.toString().padStart(decimals + 1, '0');
  const fraction = text.slice(-decimals).replace(/0+$/, '');
  return fraction === '' ? text.slice(0, -decimals) : `${text.slice(0, -decimals)}.${fraction}`;
}

export interface HistoryQuery {
  limit?: number | undefined;
  startingAfter?: string | undefined;
  kind?: EntryKind | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

/**
 * `GET /account/transactions`: the account's ledger entries, newest first, a page at a time. The
 * cursor is an entry id (`startingAfter`: entries older than it), stable under new entries.
 */
export async function listTransactions(ctx: Context, accountId: string, query: HistoryQuery) {
  const problems: ValidationProblem[] = [];
  const limit = query.limit ?? 50;
  const cursor = query.startingAfter;
  if (cursor !== undefined && !/^\d{1,18}$/.test(cursor)) {
    problems.push({ path: 'query.startingAfter', message: 'must be a transaction id from a previous page' });
  }
  const from = readTime(query.from, 'query.from', problems);
  const to = readTime(query.to, 'query.to', problems);
  if (from && to && from.getTime() > to.getTime()) {
    problems.push({ path: 'query.from', message: 'must not be after query.to' });
  }
  if (problems.length > 0) throw validationError(problems);

  const rows = await queryable(ctx).query<EntryRow>(sql.HISTORY, [
    accountId,
    cursor ?? null,
    query.kind ?? null,
    from,
    to,
    limit + 1,
  ]);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    transactions: page.map(presentEntry),
    hasMore: rows.length > limit,
    nextStartingAfter: rows.length > limit && last ? String(last.id) : null,
  };
}

function readTime(text: string | undefined, path: string, problems: ValidationProblem[]): Date | null {
  if (text === undefined) return null;
  const at = parseIsoTimestamp(text);
  if (!at)
    problems.push({ path, message: 'must be an ISO 8601 timestamp with a zone, e.g. 2026-11-23T00:00:00Z' });
  return at;
}

function presentEntry(row: EntryRow) {
  return {
    id: String(row.id),
    kind: row.kind,
    amountUsd: formatUsd(row.amount_micros),
    balanceAfterUsd: formatUsd(row.balance_after_micros),
    operation: row.operation,
    requestId: row.request_id,
    keyId: row.key_id,
    reference: row.reference,
    refundOf: row.refund_of === null ? null : String(row.refund_of),
    memo: row.memo,
    createdAt: row.created_at.toISOString(),
    chain:
      row.deposit_asset === null
        ? null
        : {
            token: row.deposit_asset,
            amount: tokenAmount(BigInt(row.deposit_amount as bigint), row.deposit_decimals as number),
            rateUsd: row.deposit_rate,
            slot: Number(row.deposit_slot),
            signature: row.deposit_signature,
          },
  };
}
