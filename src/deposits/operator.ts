import type { Queryable } from '../db/database.js';
import { formatUsd } from '../lib/money.js';
import type { SolanaRpc } from './rpc.js';
import type { FoundSignature } from './scan.js';
import * as sql from './sql.js';
import type { Treasury } from './treasury.js';
import { formatUnits } from './units.js';

export const DEPOSIT_STATUSES = ['pending', 'credited', 'unattributed', 'held', 'ignored'] as const;
export type DepositStatus = (typeof DEPOSIT_STATUSES)[number];

export interface DepositRow {
  reference: string;
  signature: string;
  instruction: string;
  asset: 'SOL' | 'USDC';
  amount: bigint | string;
  decimals: number;
  sender: string | null;
  slot: bigint | number;
  block_time: Date | null;
  status: DepositStatus;
  reason: string | null;
  account_id: string | null;
  rate: string | null;
  usd_micros: bigint | string | null;
  ledger_entry_id: bigint | string | null;
  seen_at: Date;
  finalized_at: Date | null;
}

/** A deposit row for the operator and the dashboard. */
export function presentDeposit(row: DepositRow) {
  return {
    reference: row.reference,
    signature: row.signature,
    instruction: row.instruction,
    asset: row.asset,
    amount: formatUnits(BigInt(row.amount), row.decimals),
    sender: row.sender,
    slot: Number(row.slot),
    blockTime: row.block_time?.toISOString() ?? null,
    status: row.status,
    reason: row.reason,
    accountId: row.account_id,
    rateUsd: row.rate,
    usdValue: row.usd_micros === null ? null : formatUsd(BigInt(row.usd_micros)),
    entryId: row.ledger_entry_id === null ? null : String(row.ledger_entry_id),
    seenAt: row.seen_at.toISOString(),
  };
}

export async function listDeposits(
  db: Queryable,
  filter: { status?: DepositStatus; accountId?: string; limit?: number },
): Promise<DepositRow[]> {
  return db.query<DepositRow>(sql.LIST, [
    filter.status ?? null,
    filter.accountId ?? null,
    filter.limit ?? 100,
  ]);
}

/**
 * The finalized signatures of a range for `sibyl deposits rescan`: of both treasury addresses,
 * newest first from `before` (exclusive; else from the newest), down to `since` (block time, else
 * the whole history). The cursors are not touched; the watcher's chunks skip what is final.
 */
export async function rescanRange(
  rpc: SolanaRpc,
  treasury: Treasury,
  range: { before?: string; since?: Date },
  pageSize = 1000,
): Promise<FoundSignature[]> {
  const found = new Map<string, FoundSignature>();
  const sinceSec = range.since ? Math.floor(range.since.getTime() / 1000) : null;
  for (const address of [treasury.wallet, treasury.usdcAccount]) {
    let before = range.before;
    for (;;) {
      const page = await rpc.getSignaturesForAddress(address, {
        commitment: 'finalized',
        limit: pageSize,
        ...(before !== undefined ? { before } : {}),
      });
      let done = page.length < pageSize;
      for (const info of page) {
        const blockTime = info.blockTime ?? null;
        if (sinceSec !== null && blockTime !== null && blockTime < sinceSec) {
          done = true;
          break;
        }
        found.set(info.signature, {
          signature: info.signature,
          slot: info.slot,
          blockTime,
          failed: info.err !== null,
        });
      }
      if (done || page.length === 0) break;
      before = page[page.length - 1]?.signature;
    }
  }
  return [...found.values()].sort((a, b) => a.slot - b.slot);
}
