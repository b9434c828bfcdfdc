import type { ExecutedTransaction } from './chain.js';
import { accountKeysOf, encodeJsonParsed } from './json-parsed.js';
import { MEMO_PROGRAMS } from './parse-instruction.js';

export type Commitment = 'confirmed' | 'finalized';

interface Entry {
  tx: ExecutedTransaction;
  /** Publication order, to keep transactions of one slot in block order. */
  order: number;
  /** Confirmed on a fork the cluster then abandons: it never finalises and vanishes once finality passes it. */
  orphaned: boolean;
  memo: string | null;
  /** The jsonParsed `result`, encoded once (catching up 10,000 transactions must be cheap). */
  json?: string;
}

export interface SignatureInfo {
  signature: string;
  slot: number;
  err: unknown;
  memo: string | null;
  blockTime: number;
  confirmationStatus: Commitment;
}

/**
 * `getSignaturesForAddress`'s memo: each top-level memo-program instruction (v1 or the current one)
 * as `[<byte length>] <text>` (`(unparsable)` when not UTF-8), joined with `; ` (agave
 * extract_memos).
 */
function memoOf(tx: ExecutedTransaction): string | null {
  const keys = accountKeysOf(tx);
  const memos = tx.instructions
    .filter((ix) => MEMO_PROGRAMS.has(keys[ix.programIdIndex] as string))
    .map((ix) => {
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(ix.data);
      } catch {
        text = '(unparsable)';
      }
      return `[${ix.data.length}] ${text}`;
    });
  return memos.length > 0 ? memos.join('; ') : null;
}

/**
 * What the fake RPC knows of the chain: the published transactions, indexed by every account key
 * (static and loaded, as the validator indexes them), and how far the cluster has confirmed and
 * finalised. A transaction is seen at `confirmed` once published; at `finalized` once the finalised
 * slot reaches it — unless it is orphaned, in which case finality passing it makes it vanish.
 */
export class RpcLedger {
  private readonly bySignature = new Map<string, Entry>();
  private readonly byAddress = new Map<string, Entry[]>();
  private count = 0;
  private finalizedSlot = 0;
  private confirmedSlot = 0;

  publish(tx: ExecutedTransaction, options: { finalized?: boolean; orphaned?: boolean } = {}): void {
    if (this.bySignature.has(tx.signature)) throw new Error(`already published: ${tx.signature}`);
    const entry: Entry = { tx, order: this.count++, orphaned: options.orphaned ?? false, memo: memoOf(tx) };
    this.bySignature.set(tx.signature, entry);
    for (const key of new Set(accountKeysOf(tx))) {
      const list = this.byAddress.get(key) ?? [];
      // Kept in (slot, order) order; publications nearly always arrive in slot order, so this is
      // an append (a sort per publication made 10,000 of them quadratic).
      let at = list.length;
      while (at > 0 && (list[at - 1] as Entry).tx.slot > tx.slot) at--;
      list.splice(at, 0, entry);
      this.byAddress.set(key, list);
    }
    this.confirmedSlot = Math.max(this.confirmedSlot, tx.slot);
    if (options.finalized ?? !options.orphaned) this.finalizeThrough(tx.slot);
  }

  /** The cluster finalises every slot up to `slot` (never backwards). */
  finalizeThrough(slot: number): void {
    this.finalizedSlot = Math.max(this.finalizedSlot, slot);
    this.confirmedSlot = Math.max(this.confirmedSlot, slot);
  }

  slot(commitment: Commitment): number {
    return commitment === 'finalized' ? this.finalizedSlot : this.confirmedSlot;
  }

  private seenAt(entry: Entry, commitment: Commitment): Commitment | null {
    const finalised = entry.tx.slot <= this.finalizedSlot;
    if (entry.orphaned) return finalised ? null : commitment === 'confirmed' ? 'confirmed' : null;
    if (finalised) return 'finalized';
    return commitment === 'confirmed' ? 'confirmed' : null;
  }

  /** The cached jsonParsed result of a transaction, or null when not seen at this commitment. */
  transactionJson(signature: string, commitment: Commitment): { json: string; version: 'legacy' | 0 } | null {
    const entry = this.bySignature.get(signature);
    if (!entry || !this.seenAt(entry, commitment)) return null;
    entry.json ??= JSON.stringify(encodeJsonParsed(entry.tx));
    return { json: entry.json, version: entry.tx.version };
  }

  /**
   * Signatures of transactions naming `address`, newest first, from just before `before` (nothing
   * when `before` is unknown, as a validator answers) down to just above `until`.
   */
  signaturesFor(
    address: string,
    options: { commitment: Commitment; limit: number; before?: string; until?: string },
  ): SignatureInfo[] {
    const list = this.byAddress.get(address) ?? [];
    let start = list.length - 1;
    if (options.before !== undefined) {
      const at = list.findIndex((e) => e.tx.signature === options.before);
      if (at < 0) return [];
      start = at - 1;
    }
    const out: SignatureInfo[] = [];
    for (let i = start; i >= 0 && out.length < options.limit; i--) {
      const entry = list[i] as Entry;
      if (entry.tx.signature === options.until) break;
      const status = this.seenAt(entry, options.commitment);
      if (!status) continue;
      out.push({
        signature: entry.tx.signature,
        slot: entry.tx.slot,
        err: entry.tx.meta.err,
        memo: entry.memo,
        blockTime: entry.tx.blockTime,
        confirmationStatus: status,
      });
    }
    return out;
  }

  /** The block time of a slot the ledger holds a transaction in, or null. */
  blockTime(slot: number): number | null {
    for (const entry of this.bySignature.values()) if (entry.tx.slot === slot) return entry.tx.blockTime;
    return null;
  }
}
