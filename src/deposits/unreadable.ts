import { createContext, type TxContext, withTransaction } from '../context.js';
import { type Database, isDataException, type Queryable } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../logger.js';
import { type Booked, writeFinal } from './book.js';
import type { Unreadable } from './scan.js';
import * as sql from './sql.js';
import { formatUnits } from './units.js';

/**
 * Transactions the watcher cannot book (docs/deposits.md#unreadable-transactions). One such
 * transaction — a u64-max USDC transfer that overflowed a `bigint`, a transfer whose parsed form the
 * parser refuses — once failed every poll, so every later deposit waited. Now it is recorded once,
 * listed for the operator, and the cursor moves past it.
 */

/** The ledger's amounts are `bigint` micro-USD: a deposit worth more cannot be entered. */
const LEDGER_MAX_MICROS = 2n ** 63n - 1n;

/** One chunk of finalized transactions, read: what to book, what could not be read, and every signature read. */
export interface Chunk {
  booked: Booked[];
  unreadable: Unreadable[];
  /** The chunk's signatures read without trouble (booked or not: a transfer to someone else is no deposit). */
  readable: string[];
}

export interface ChunkOutcome {
  written: Booked[];
  /** Transactions recorded as unreadable now (a second reading of one records nothing). */
  unreadable: number;
}

/**
 * Writes a chunk: its deposits (writeFinal), its unreadable transactions, and clears the record of
 * any transaction read fine now (a rescan after a fix) — in one database transaction. Should the
 * database refuse the chunk for the data it carries (SQLSTATE class 22: a value out of range), it is
 * written again one transaction at a time, and the one refused is recorded as unreadable with the
 * database's reason: only a refusal that would recur is taken for a poison transaction; any other
 * error fails the poll, which leaves the cursors where they were, as before.
 */
export async function writeChunk(
  deps: { db: Database; clock: Clock; log: Log },
  chunk: Chunk,
): Promise<ChunkOutcome> {
  const ctx = createContext(deps.db, deps.clock);
  const unreadable = [...chunk.unreadable, ...beyondLedger(chunk.booked)];
  const refused = new Set(unreadable.map((u) => u.signature));
  const booked = chunk.booked.filter((b) => !refused.has(b.deposit.signature));
  const readable = () => chunk.readable.filter((s) => !refused.has(s));

  if (booked.length === 0 && unreadable.length === 0) {
    if (readable().length > 0) await deps.db.query(sql.CLEAR_UNREADABLE, [readable()]);
    return { written: [], unreadable: 0 };
  }
  try {
    return await withTransaction(ctx, async (tx) => {
      const written = await writeFinal(tx, booked);
      await tx.tx.query(sql.CLEAR_UNREADABLE, [readable()]);
      return { written, unreadable: await record(tx, unreadable, deps.log) };
    });
  } catch (err) {
    if (!isDataException(err)) throw err;
  }

  const written: Booked[] = [];
  for (const group of bySignature(booked)) {
    const first = (group[0] as Booked).deposit;
    try {
      written.push(...(await withTransaction(ctx, (tx) => writeFinal(tx, group))));
    } catch (err) {
      if (!isDataException(err)) throw err;
      const message = err instanceof Error ? err.message : String(err);
      unreadable.push({
        signature: first.signature,
        slot: first.slot,
        blockTime: first.blockTime,
        reason: `the database refused its deposits: ${message}`,
      });
      refused.add(first.signature);
    }
  }
  return withTransaction(ctx, async (tx) => {
    await tx.tx.query(sql.CLEAR_UNREADABLE, [readable()]);
    return { written, unreadable: await record(tx, unreadable, deps.log) };
  });
}

/** Deposits worth more than the ledger can hold: their transactions are unreadable. */
function beyondLedger(booked: Booked[]): Unreadable[] {
  const out = new Map<string, Unreadable>();
  for (const { deposit, usdMicros } of booked) {
    if (usdMicros === null || usdMicros <= LEDGER_MAX_MICROS || out.has(deposit.signature)) continue;
    out.set(deposit.signature, {
      signature: deposit.signature,
      slot: deposit.slot,
      blockTime: deposit.blockTime,
      reason: `instruction ${deposit.instruction}: ${formatUnits(deposit.amount, deposit.decimals)} ${deposit.asset} is worth more than the ledger can hold`,
    });
  }
  return [...out.values()];
}

function bySignature(booked: Booked[]): Booked[][] {
  const groups = new Map<string, Booked[]>();
  for (const b of booked) groups.set(b.deposit.signature, [...(groups.get(b.deposit.signature) ?? []), b]);
  return [...groups.values()];
}

async function record(ctx: TxContext, unreadable: Unreadable[], log: Log): Promise<number> {
  if (unreadable.length === 0) return 0;
  const recorded = await ctx.tx.query<{ signature: string; reason: string }>(sql.RECORD_UNREADABLE, [
    unreadable.map((u) => u.signature),
    unreadable.map((u) => u.slot),
    unreadable.map((u) => (u.blockTime === null ? null : new Date(u.blockTime * 1000))),
    unreadable.map((u) => u.reason.slice(0, 1000)),
    ctx.clock.now(),
  ]);
  for (const row of recorded) {
    log.warn(
      { task: 'deposits', signature: row.signature, reason: row.reason },
      'deposit transaction unreadable: recorded for the operator (sibyl deposits list --unreadable)',
    );
  }
  return recorded.length;
}

interface UnreadableRow {
  signature: string;
  slot: bigint | number;
  block_time: Date | null;
  reason: string;
  seen_at: Date;
}

/** `sibyl deposits list --unreadable`: the newest first. */
export async function listUnreadable(db: Queryable, limit: number) {
  const rows = await db.query<UnreadableRow>(sql.LIST_UNREADABLE, [limit]);
  return rows.map((row) => ({
    signature: row.signature,
    slot: Number(row.slot),
    blockTime: row.block_time?.toISOString() ?? null,
    reason: row.reason,
    seenAt: row.seen_at.toISOString(),
  }));
}
