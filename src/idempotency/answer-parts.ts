import { hash } from 'node:crypto';
import { afterCommit } from '../db/after-commit.js';
import type { Queryable } from '../db/database.js';
import { pruneStatement } from '../db/prune.js';
import { setBounded } from '../lib/bounded-map.js';
import { RETENTION_MS } from './idempotency.js';

/**
 * Stored answers share their bulk. Under load, the answers of a batch price request differ in their
 * request id, timestamp and balance, and little else: the prices come from aggregates that are
 * reused for up to a second, so hundreds of answers carry the same 20 KB list. Storing each whole
 * doubled what a keyed request cost (docs/performance.md#idempotency-keys). An answer is instead
 * stored as a head, a shared part and a tail: the part — the answer from its first `[` to its last
 * `]`, its largest list — is stored once (`idempotency_parts`, by its SHA-256) and referred to by
 * every answer that carries the same bytes. The split only decides what is shared; a replay
 * concatenates the three and sends exactly the bytes that were sent the first time.
 */

/** Smaller lists stay in the answer's own row: a part is worth its lookup only when it is big. */
export const PART_MIN_CHARS = 2048;
/**
 * How long this process trusts that a part it stored is still there without sending it again. A
 * part is pruned only when no answer has used it for RETENTION_MS + PART_GRACE_MS; every use after
 * TRUST_MS sends it again, which moves its `last_used`, so it outlives every answer that refers to it.
 */
export const PART_TRUST_MS = 60 * 60 * 1000;
export const PART_GRACE_MS = 2 * PART_TRUST_MS;
const MAX_KNOWN = 10_000;

export interface AnswerShape {
  /** The answer up to its part, or the whole answer when it has none. */
  head: string;
  part?: { hash: string; text: string } | undefined;
  /** What follows the part (with the balance, for a pending answer); null without a part. */
  tail: string | null;
}

// The last part hashed, and its hash: under load most answers carry the part the one before them
// carried, and comparing the strings costs a tenth of hashing one.
let last = { text: '', hash: '' };

/** Splits an answer into head, part and tail: the part is its first `[` to its last `]`. */
export function splitAnswer(body: string): AnswerShape {
  const start = body.indexOf('[');
  const end = body.lastIndexOf(']') + 1;
  if (start < 0 || end - start < PART_MIN_CHARS) return { head: body, tail: null };
  const text = body.slice(start, end);
  if (text !== last.text) last = { text, hash: hash('sha256', text, 'base64url') };
  return { head: body.slice(0, start), part: { hash: last.hash, text: last.text }, tail: body.slice(end) };
}

// The same for encoded answers: the last part's bytes, its text and its hash.
let lastEncoded = { bytes: Buffer.alloc(0), text: '', hash: '' };

/**
 * splitAnswer of the UTF-8 text of `encoded`'s first `length` bytes, on the bytes: `[` and `]` are
 * single bytes in UTF-8 that no other character's encoding contains, so the cuts fall where the
 * text's would. A part equal byte for byte to the last one is neither decoded nor hashed again (a
 * memcmp, where splitAnswer of a fresh string flattens, slices and compares it:
 * docs/performance.md#what-a-key-costs); the head and tail are short.
 */
export function splitEncoded(encoded: Buffer, length: number): AnswerShape {
  const start = encoded.indexOf(0x5b);
  const end = encoded.lastIndexOf(0x5d, length - 1) + 1;
  // Fewer bytes than PART_MIN_CHARS are fewer characters too; more bytes may still be fewer
  // characters (the part's text decides, below).
  if (start < 0 || start >= length || end - start < PART_MIN_CHARS) {
    return { head: encoded.toString('utf8', 0, length), tail: null };
  }
  const size = end - start;
  if (size !== lastEncoded.bytes.length || encoded.compare(lastEncoded.bytes, 0, size, start, end) !== 0) {
    const text = encoded.toString('utf8', start, end);
    if (text.length < PART_MIN_CHARS) return { head: encoded.toString('utf8', 0, length), tail: null };
    // The bytes hashed are the text's UTF-8, as splitAnswer hashes it.
    const bytes = Buffer.from(encoded.subarray(start, end));
    lastEncoded = { bytes, text, hash: hash('sha256', bytes, 'base64url') };
  }
  return {
    head: encoded.toString('utf8', 0, start),
    part: { hash: lastEncoded.hash, text: lastEncoded.text },
    tail: encoded.toString('utf8', end, length),
  };
}

/**
 * The parts this process stored (committed) lately: those need not be sent again. Entries are
 * added only after the transaction that stored them commits, so an answer never refers to a part
 * that was rolled back.
 */
export class AnswerParts {
  private readonly known = new Map<string, number>();

  /** `now`: the clock of the service, which the pruning task's clock agrees with. */
  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Stores the parts of `shapes` that this process has not stored within PART_TRUST_MS, in `tx`
   * (the transaction that stores the answers referring to them), in hash order so that concurrent
   * transactions lock them in one order.
   */
  async store(tx: Queryable, shapes: readonly AnswerShape[]): Promise<void> {
    const now = this.now();
    const fresh = new Map<string, string>();
    for (const { part } of shapes) {
      if (!part || fresh.has(part.hash)) continue;
      const storedAt = this.known.get(part.hash);
      if (storedAt !== undefined && now - storedAt < PART_TRUST_MS && now >= storedAt) continue;
      fresh.set(part.hash, part.text);
    }
    if (fresh.size === 0) return;
    const hashes = [...fresh.keys()].sort();
    await tx.query(storePartsSql(hashes.length), [
      new Date(now),
      ...hashes.flatMap((hash) => [hash, fresh.get(hash)]),
    ]);
    afterCommit(tx, () => {
      for (const hash of hashes) setBounded(this.known, hash, now, MAX_KNOWN);
    });
  }
}

/**
 * Inserts parts, or moves the `last_used` of those already there. Each body is a parameter of its
 * own: as text[] elements the driver escapes 20 KB answers character by character (see sql.ts).
 */
function storePartsSql(count: number): string {
  const rows = Array.from({ length: count }, (_, i) => `($${i * 2 + 2}, $${i * 2 + 3}, $1::timestamptz)`);
  return `INSERT INTO idempotency_parts (hash, body, last_used) VALUES ${rows.join(', ')}
          ON CONFLICT (hash) DO UPDATE SET last_used = greatest(idempotency_parts.last_used, EXCLUDED.last_used)`;
}

/**
 * Retention: deletes up to $2 parts unused since $1, which no answer can refer to any more (see
 * PART_GRACE_MS); returns how many. Reads idempotency_parts_last_used, oldest first; the shape of
 * the shape is `pruneStatement`'s (db/prune.ts).
 */
export const PRUNE_PARTS = pruneStatement({
  name: 'idempotency_prune_parts',
  table: 'idempotency_parts',
  key: 'hash',
  ended: 'last_used < $1',
  orderBy: 'last_used',
});

/** How long a part is kept after its last use: past every answer that can refer to it. */
export const PARTS_RETENTION_MS = RETENTION_MS + PART_GRACE_MS;
