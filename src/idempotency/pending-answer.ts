import type { Queryable } from '../db/database.js';
import { formatUsd } from '../lib/money.js';
import { encodeUtf8 } from '../lib/utf8-slab.js';
import { type AnswerShape, splitEncoded } from './answer-parts.js';
import { insertAnswers } from './sql.js';

/**
 * The answer of a request with an Idempotency-Key whose route is billed after its handler (the
 * batch price): its bytes are complete but for the balance its charge leaves. Such a route writes
 * nothing before its charge, so its key is not taken beforehand: it is taken by storing the
 * answer, in the transaction of the charge — one row written once, in the charge's commit, instead
 * of a claim committed on its own and an update (docs/performance.md#idempotency-keys). When the
 * key turns out to be taken (a retry whose first attempt was charged, a duplicate charged first),
 * that transaction rolls back — nothing was charged — and the request answers as the key's holder
 * says (replay, 422, 409).
 */
export interface PendingAnswer {
  idempotencyKey: string;
  /** The request's fingerprint (method, path, canonical body): see idempotency.ts. */
  fingerprint: string;
  /** When the request arrived, by the service's clock: the key's `created_at`. */
  createdAt: Date;
  /** The answer with its balance, as stored by a charge alone. */
  render(balanceMicros: bigint): string;
  /**
   * The same answer as sent: its bytes, encoded once. (A string completed with the balance was a
   * second 20 KB copy of the answer per request, flattened on the way to the socket; the keyed
   * batch's CPU profile showed it as garbage collection.) Only the bytes of the last call are valid.
   */
  bytes(balanceMicros: bigint): Buffer;
  /** The same answer split for storage, its bulk shared with other answers (answer-parts.ts). */
  shape(balanceMicros: bigint): AnswerShape;
  /**
   * The answer split for storage up to its balance, for a statement that completes it: the part's
   * tail (or, without a part, the head) ends with `"remainingBalanceUsd":"`, to which the balance
   * and `"}` are appended.
   */
  awaiting: AnswerShape;
}

/** The outcome of a charge whose answer could not be stored: its key is someone else's. */
export interface KeyTaken {
  ok: false;
  reason: 'IDEMPOTENCY_KEY_TAKEN';
}

export const KEY_TAKEN: KeyTaken = { ok: false, reason: 'IDEMPOTENCY_KEY_TAKEN' };

/** Thrown inside a charge's transaction to roll it back: the answers at `items` lost their keys. */
export class KeysTakenError extends Error {
  constructor(readonly items: readonly number[]) {
    super('Idempotency-Key taken');
    this.name = 'KeysTakenError';
  }
}

/**
 * The balance an answer is first serialised with: the longest one ("999999999999.999999"), so that
 * the encoded answer has room for any real balance, written in place.
 */
const PLACEHOLDER_MICROS = 999_999_999_999_999_999n;
const BALANCE_PLACEHOLDER = formatUsd(PLACEHOLDER_MICROS);
const ANSWER_END = `"remainingBalanceUsd":"${BALANCE_PLACEHOLDER}"}`;
const PLACEHOLDER_BYTES = BALANCE_PLACEHOLDER.length + 2;

/**
 * The answer of a charge with an Idempotency-Key, from `serialise` (the answer as it will be sent,
 * given the balance its charge leaves; `remainingBalanceUsd` is its last field). It is serialised
 * once, with a placeholder balance, and encoded once, as an unkeyed answer is on its way to the
 * socket (into a slice of a shared slab, lib/utf8-slab.ts, not a buffer of its own); it is split
 * for storage on those bytes and cut before the balance: the charge statement
 * completes the stored copy in SQL and the route completes the sent bytes in place. That is what
 * lets a coalesced batch store its answers in the very statement that charges them: with the store
 * as a second round trip (BEGIN, charge, store, COMMIT) the keyed batch ran at 0.76 × the unkeyed
 * one, with one round trip at 0.90 × (docs/performance.md#idempotency-keys).
 */
export function pendingAnswer(
  key: { idempotencyKey: string; fingerprint: string; createdAt: Date },
  serialise: (balanceMicros: bigint) => string,
): PendingAnswer {
  const text = serialise(PLACEHOLDER_MICROS);
  // Encoding flattens the serializer's string, so the check after it reads flat text (a Buffer
  // compare of the same bytes is a native call that cost more than the check).
  const encoded = encodeUtf8(text);
  if (!text.endsWith(ANSWER_END)) throw new Error('remainingBalanceUsd must be the last field of an answer');
  return encodedAwaitingBalance(key, encoded, encoded.length - PLACEHOLDER_BYTES);
}

/** An answer complete up to its balance (`prefix` ends with `"remainingBalanceUsd":"`). */
export function answerAwaitingBalance(
  key: { idempotencyKey: string; fingerprint: string; createdAt: Date },
  prefix: string,
): PendingAnswer {
  const encoded = encodeUtf8(`${prefix}${BALANCE_PLACEHOLDER}"}`);
  return encodedAwaitingBalance(key, encoded, encoded.length - PLACEHOLDER_BYTES);
}

/**
 * An answer whose first `length` bytes of `encoded` are its UTF-8 up to the balance, followed by
 * room for the longest balance and its closing `"}`.
 */
function encodedAwaitingBalance(
  key: { idempotencyKey: string; fingerprint: string; createdAt: Date },
  encoded: Buffer,
  length: number,
): PendingAnswer {
  let prefix: string | undefined;
  const render = (balanceMicros: bigint) => {
    prefix ??= encoded.toString('utf8', 0, length);
    return `${prefix}${formatUsd(balanceMicros)}"}`;
  };
  // Split (and hashed, when its part is new) here, before the charge, rather than in the charge's batch.
  const split = splitEncoded(encoded, length);
  return {
    ...key,
    render,
    bytes: (balanceMicros) => {
      const end = `${formatUsd(balanceMicros)}"}`;
      // Only a balance of a trillion dollars or more can be longer than the placeholder.
      if (end.length > PLACEHOLDER_BYTES)
        return Buffer.concat([encoded.subarray(0, length), Buffer.from(end)]);
      return encoded.subarray(0, length + encoded.write(end, length, 'latin1'));
    },
    awaiting: split,
    shape: (balanceMicros) =>
      split.part
        ? { ...split, tail: `${split.tail}${formatUsd(balanceMicros)}"}` }
        : { head: render(balanceMicros), tail: null },
  };
}

export interface NewAnswer {
  accountId: string;
  requestId: string;
  answer: PendingAnswer;
  /** How the answer is stored (its parts stored first, by AnswerParts). */
  shape: AnswerShape;
}

/**
 * Stores answers of charged requests, taking their keys, in the charges' transaction: a key no
 * one holds, or one held by a request of the same fingerprint whose lock lapsed (its process died),
 * is taken. Throws KeysTakenError with the positions of the others, which rolls the transaction —
 * their charges with it — back. `answers` must not repeat a key.
 */
export async function storeNewAnswers(tx: Queryable, answers: readonly NewAnswer[]): Promise<void> {
  if (answers.length === 0) return;
  const stored = await tx.query<{ request_id: string }>(
    insertAnswers(answers.length),
    answers.flatMap(({ accountId, requestId, answer, shape }) => [
      accountId,
      answer.idempotencyKey,
      answer.fingerprint,
      requestId,
      shape.head,
      shape.part?.hash ?? null,
      shape.tail,
      answer.createdAt,
    ]),
  );
  if (stored.length === answers.length) return;
  const ok = new Set(stored.map((row) => row.request_id));
  throw new KeysTakenError([...answers.keys()].filter((i) => !ok.has((answers[i] as NewAnswer).requestId)));
}
