import { createContext } from '../context.js';
import type { Database } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import { randomBase62 } from '../lib/ids.js';
import type { Log } from '../logger.js';
import { TaskLease } from '../queue/lease.js';
import type { PeriodicTask } from '../queue/periodic.js';
import { attribute, type Booked, book, writePending } from './book.js';
import type { DepositConfig } from './config.js';
import { depositMetrics } from './metrics.js';
import type { DepositPrices } from './prices.js';
import type { SolanaRpc } from './rpc.js';
import { type Cursors, DEFAULT_PAGE_SIZE, depositsAt, type FoundSignature, scanTreasury } from './scan.js';
import * as sql from './sql.js';
import type { Treasury } from './treasury.js';
import { writeChunk } from './unreadable.js';

export interface WatcherDeps {
  db: Database;
  clock: Clock;
  log: Log;
  rpc: SolanaRpc;
  treasury: Treasury;
  prices: DepositPrices;
  settings: Pick<DepositConfig, 'pollMs' | 'minUsdMicros'>;
  /** Signatures per getSignaturesForAddress page; default 1000 (the RPC's maximum). */
  pageSize?: number;
  /** Finalized transactions read and written per database transaction; default 100. */
  chunkSize?: number;
  /** The lease holder's name; default: this process's id and a random suffix. */
  holder?: string;
}

export interface PollReport {
  /** Finalized deposits written by this poll, by status. */
  written: Record<Booked['status'], number>;
  /** Transactions recorded as unreadable by this poll (docs/deposits.md#unreadable-transactions). */
  unreadable: number;
  pending: number;
  /** False when the poll stopped early (the process is stopping, or the lease was lost). */
  complete: boolean;
}

const LEASE = 'deposits';

export interface DepositWatcher {
  /** The periodic task every worker process runs; one poll at a time across them (a lease). */
  task: PeriodicTask;
  /** One poll, if this process holds (or takes) the lease; null when another worker has it. */
  poll(signal?: AbortSignal): Promise<PollReport | null>;
  /** Processes these finalized signatures (a rescan): final rows are skipped, nothing doubles. */
  process(signatures: FoundSignature[], signal?: AbortSignal): Promise<PollReport>;
}

/**
 * The deposit watcher (docs/deposits.md#the-watcher). Each poll reads what is new since the stored
 * cursors; finalized transactions are read and booked in chunks, each chunk's rows and ledger
 * entries in one database transaction; then the pending set, the cursors and the poll's outcome in
 * a last one. A crash anywhere leaves the cursors where they were: the next poll reads the same
 * transactions again and skips every reference already final, so each deposit is credited once.
 */
export function createDepositWatcher(deps: WatcherDeps): DepositWatcher {
  const { db, clock, log, rpc, treasury, prices, settings } = deps;
  const pageSize = deps.pageSize ?? DEFAULT_PAGE_SIZE;
  const chunkSize = deps.chunkSize ?? 100;
  // Attribution reads the wallets and reference keys through the accounts' door, on the pool.
  const ctx = createContext(db, clock);
  const lease = new TaskLease(db, LEASE, deps.holder ?? `${process.pid}-${randomBase62(8)}`);
  const holdMs = Math.max(settings.pollMs * 4, 2000);
  const keepLease = () => {
    const now = clock.now();
    return lease.acquire(now, new Date(now.getTime() + holdMs));
  };

  async function processSignatures(signatures: FoundSignature[], signal?: AbortSignal): Promise<PollReport> {
    const written = { credited: 0, unattributed: 0, held: 0, ignored: 0 };
    let unreadable = 0;
    for (let i = 0; i < signatures.length; i += chunkSize) {
      if (i > 0 && (signal?.aborted || !(await keepLease()))) {
        return { written, unreadable, pending: 0, complete: false };
      }
      const chunk = signatures.slice(i, i + chunkSize);
      const read = await depositsAt(rpc, treasury, chunk, 'finalized');
      const final = new Set(
        read.deposits.length === 0
          ? []
          : (
              await db.query<{ reference: string }>(sql.FINAL_AMONG, [read.deposits.map((d) => d.reference)])
            ).map((r) => r.reference),
      );
      const deposits = read.deposits.filter((d) => !final.has(d.reference));
      const unread = new Set(read.unreadable.map((u) => u.signature));
      const outcome = await writeChunk(
        { db, clock, log },
        {
          booked: deposits.length === 0 ? [] : await book(ctx, prices, settings.minUsdMicros, deposits),
          unreadable: read.unreadable,
          readable: chunk.filter((s) => !s.failed && !unread.has(s.signature)).map((s) => s.signature),
        },
      );
      unreadable += outcome.unreadable;
      for (const b of outcome.written) {
        written[b.status]++;
        if (b.status === 'credited') depositMetrics.credited(b.deposit.asset);
      }
    }
    return { written, unreadable, pending: 0, complete: true };
  }

  async function pollHeld(signal?: AbortSignal): Promise<PollReport> {
    const rows = await db.query<{ address: string; signature: string | null }>(sql.CURSORS);
    const cursors: Cursors = Object.fromEntries(rows.map((r) => [r.address, r.signature]));
    // Everything finalized by now is read by this scan: once it is booked, the watcher is this far.
    const processedSlot = await rpc.getSlot('finalized');
    const scan = await scanTreasury(rpc, treasury, cursors, pageSize);
    const report = await processSignatures(scan.creditable, signal);
    if (!report.complete) return report;
    const { deposits: pending } = await depositsAt(rpc, treasury, scan.pending, 'confirmed');
    const attributions = await attribute(ctx, pending);
    const finalizedSlot = await rpc.getSlot('finalized');
    const now = clock.now();
    await db.transaction(async (tx) => {
      await writePending(tx, pending, attributions, now);
      for (const [address, signature] of Object.entries(scan.cursors)) {
        if (signature === null || signature === cursors[address]) continue;
        const slot = scan.creditable.find((s) => s.signature === signature)?.slot ?? null;
        await tx.query(sql.SAVE_CURSOR, [address, signature, slot, now]);
      }
      await tx.query(sql.RECORD_POLL, [now, null, finalizedSlot, processedSlot]);
    });
    depositMetrics.lag(Math.max(0, finalizedSlot - processedSlot));
    depositMetrics.statuses(await db.query(sql.COUNTS));
    return { ...report, pending: pending.length };
  }

  async function poll(signal?: AbortSignal): Promise<PollReport | null> {
    if (!(await keepLease())) return null;
    try {
      const report = await pollHeld(signal);
      depositMetrics.polled(true);
      const total = Object.values(report.written).reduce((a, b) => a + b, 0);
      if (total > 0 || report.unreadable > 0) {
        log.info({ task: LEASE, written: report.written, unreadable: report.unreadable }, 'deposits booked');
      }
      return report;
    } catch (err) {
      depositMetrics.polled(false);
      const kind = (err as { kind?: string }).kind;
      if (kind) depositMetrics.rpcError(kind);
      const message = err instanceof Error ? err.message : String(err);
      await db
        .query(sql.RECORD_POLL, [clock.now(), message.slice(0, 500), null, null])
        .catch(() => undefined);
      throw err;
    }
  }

  return {
    task: {
      name: LEASE,
      intervalMs: settings.pollMs,
      run: async (_now, signal) => void (await poll(signal)),
    },
    poll,
    process: processSignatures,
  };
}
