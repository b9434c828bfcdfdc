import { type Deposit, depositsOf } from './deposits.js';
import { type ParsedTransaction, type SignatureInfo, type SolanaRpc, SolanaRpcError } from './rpc.js';
import type { Treasury } from './treasury.js';

/** Signatures per `getSignaturesForAddress` page (the RPC's maximum is 1000). */
export const DEFAULT_PAGE_SIZE = 1000;

/**
 * Where a scan resumes, per watched address (the treasury wallet and its USDC account): the newest
 * finalized signature whose transaction has been processed, or null to read the whole history.
 */
export type Cursors = Record<string, string | null>;

/** A signature the scan found, with the slot it landed in. */
export interface FoundSignature {
  signature: string;
  slot: number;
  blockTime: number | null;
  /** Whether the transaction failed (its deposits are none; it still moves the cursor). */
  failed: boolean;
}

export interface ScanResult {
  /** Finalized transactions since the cursors, oldest first, each once: to be credited. */
  creditable: FoundSignature[];
  /** Transactions seen at `confirmed` but not finalized yet, oldest first: to be shown as pending. */
  pending: FoundSignature[];
  /**
   * The cursors to store once every creditable transaction has been processed: per address, the
   * newest finalized signature found (unchanged where nothing new was found).
   */
  cursors: Cursors;
}

/**
 * Every signature of `address` newer than `until`, at `confirmed` (which lists finalized ones too,
 * each with its confirmationStatus), oldest first. Pages newest-first with `before` = the last
 * signature of the previous page, until a page comes back shorter than asked or empty.
 */
export async function signaturesSince(
  rpc: SolanaRpc,
  address: string,
  until: string | null,
  pageSize = DEFAULT_PAGE_SIZE,
): Promise<SignatureInfo[]> {
  const newestFirst: SignatureInfo[] = [];
  let before: string | undefined;
  for (;;) {
    const page = await rpc.getSignaturesForAddress(address, {
      commitment: 'confirmed',
      limit: pageSize,
      ...(before !== undefined ? { before } : {}),
      ...(until !== null ? { until } : {}),
    });
    newestFirst.push(...page);
    if (page.length < pageSize) break;
    before = (page[page.length - 1] as SignatureInfo).signature;
  }
  return newestFirst.reverse();
}

function found(info: SignatureInfo): FoundSignature {
  return {
    signature: info.signature,
    slot: info.slot,
    blockTime: info.blockTime ?? null,
    failed: info.err !== null,
  };
}

/**
 * One pass over the treasury's two addresses: what is new since the cursors, split into creditable
 * (finalized) and pending (confirmed only). A transaction naming both addresses (a USDC account
 * created with its first transfer) is listed once. Pending ones are newer than every finalized one
 * (finality advances by slot), so the cursors never pass a pending transaction; one that never
 * finalises simply stops being listed.
 */
export async function scanTreasury(
  rpc: SolanaRpc,
  treasury: Treasury,
  cursors: Cursors,
  pageSize = DEFAULT_PAGE_SIZE,
): Promise<ScanResult> {
  const creditable = new Map<string, FoundSignature>();
  const pending = new Map<string, FoundSignature>();
  const next: Cursors = {};
  for (const address of [treasury.wallet, treasury.usdcAccount]) {
    const cursor = cursors[address] ?? null;
    let newestFinalized = cursor;
    for (const info of await signaturesSince(rpc, address, cursor, pageSize)) {
      if (info.confirmationStatus === 'finalized') {
        creditable.set(info.signature, found(info));
        pending.delete(info.signature);
        newestFinalized = info.signature;
      } else if (!creditable.has(info.signature)) {
        pending.set(info.signature, found(info));
      }
    }
    next[address] = newestFinalized;
  }
  const bySlot = (a: FoundSignature, b: FoundSignature) => a.slot - b.slot;
  return {
    creditable: [...creditable.values()].sort(bySlot),
    pending: [...pending.values()].sort(bySlot),
    cursors: next,
  };
}

/**
 * A finalized transaction the watcher read but cannot book, and why (docs/deposits.md#unreadable-transactions):
 * recorded once, listed for the operator; the cursor moves past it.
 */
export interface Unreadable {
  signature: string;
  slot: number;
  blockTime: number | null;
  reason: string;
}

/** What `depositsAt` read: the deposits, and the transactions it could not read. */
export interface DepositsRead {
  deposits: Deposit[];
  /** At `finalized` only: at `confirmed` such a transaction is skipped until it is final. */
  unreadable: Unreadable[];
}

/**
 * The deposits of `signatures` (failed transactions are skipped without a call), read at
 * `commitment` in JSON-RPC batches: one list for a whole poll, for the wiring to write in one
 * transaction. At `finalized`, a listed transaction the node does not return (a lagging node
 * behind a load balancer) fails the call, so the cursor is not moved past it; at `confirmed` it is
 * skipped (its fork may just have been abandoned). A transaction answered in a shape the RPC
 * schema or the parser refuses is one transaction's problem, not the call's: unreadable.
 */
export async function depositsAt(
  rpc: SolanaRpc,
  treasury: Treasury,
  signatures: FoundSignature[],
  commitment: 'confirmed' | 'finalized',
): Promise<DepositsRead> {
  const wanted = signatures.filter((s) => !s.failed);
  const transactions = await rpc.getTransactions(
    wanted.map((s) => s.signature),
    commitment,
  );
  const read: DepositsRead = { deposits: [], unreadable: [] };
  transactions.forEach((tx, i) => {
    const { signature, slot, blockTime } = wanted[i] as FoundSignature;
    if (tx === null) {
      if (commitment === 'confirmed') return;
      throw new SolanaRpcError(
        'bad_response',
        `transaction ${signature} is listed but not returned at ${commitment}`,
        {
          method: 'getTransaction',
        },
      );
    }
    const reason = 'unreadable' in tx ? tx.unreadable : parse(tx);
    if (typeof reason !== 'string') {
      read.deposits.push(...reason);
    } else if (commitment === 'finalized') {
      read.unreadable.push({ signature, slot, blockTime, reason });
    }
  });
  return read;

  // The parser is a pure function of the transaction: what it refuses, it refuses every time.
  function parse(tx: ParsedTransaction): Deposit[] | string {
    try {
      return depositsOf(tx, treasury);
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
  }
}
